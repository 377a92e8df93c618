/**
 * What a verified bearer credential says about who presents it, before the store is asked: the
 * account, the auth_version it was issued under, its session and signing key (an API key has
 * neither). authenticate() holds every kind to the same checks against the store.
 */
import type { TokenSubjectRef } from '../store/request-facts';

export interface Presented extends TokenSubjectRef {
  authVersion: number;
  /** An API key (its refusal is worded for a key). */
  apiKey?: true;
}

/**
 * Who is asking: a request's caller (its bearer token, address, browser) made into an actor, and
 * the one administrator check every domain uses.
 */
import { denied } from '../errors';
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { isGuest, type Principal } from '../permission/check';
import { authenticate } from './authenticate';

/** The actor behind a request: a guest without credentials, 401 for a bad token. */
export async function actorOf(s: Services, caller: Caller): Promise<Actor> {
  const { principal, session } = await authenticate(s, caller.token);
  return { principal, via: 'http', client: caller.client, userAgent: caller.userAgent, session, device: caller.device ?? null };
}

export async function principalOf(s: Services, caller: Caller): Promise<Principal> {
  return (await authenticate(s, caller.token)).principal;
}

/** Administrators and the operator at the shell pass; a guest is asked to sign in (401), anyone else refused (403). */
export function requireAdministrator(actor: Actor, what: string): void {
  if (!actor.principal.isAdmin) throw denied(isGuest(actor.principal), what, 'administrators_only');
}

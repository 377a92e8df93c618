/**
 * API keys' material (contract section 16): `gh_` and 32 base64url characters (192 random bits),
 * kept as SHA-256. access/api-keys.ts checks a presented key against the store.
 */
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'gh_';
/** What a key looks like: anything else is refused before the store is asked. */
export const API_KEY_SHAPE = /^gh_[A-Za-z0-9_-]{32}$/;

export const apiKeyDigest = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

/** A new key: the prefix and 24 random bytes as base64url. */
export const newApiKey = () => API_KEY_PREFIX + randomBytes(24).toString('base64url');

/** Whether a bearer token is meant as an API key (and must be checked as one, never as a JWT). */
export const isApiKey = (token: string) => token.startsWith(API_KEY_PREFIX);

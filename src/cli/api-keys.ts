/**
 * `gatehouse user api-key add <email> --name N [--expires 90d] | list <email> | revoke <email> <id>`:
 * keys a script uses as `Authorization: Bearer gh_…` to act as the account on the HTTP API. The
 * key is printed once.
 */
import type { Command } from 'commander';
import { parseDuration } from '../config';
import type { ApiKeyView, NewApiKey } from '../core';
import type { Io } from './io';
import { registerCredentialCommands } from './named-credentials';

export function registerApiKeys(user: Command, io: Io): void {
  registerCredentialCommands<ApiKeyView, NewApiKey>(user, io, {
    command: 'api-key',
    description: 'keys a script acts as an account with on the HTTP API (Authorization: Bearer gh_…)',
    plural: 'API keys',
    jsonKey: 'api_key',
    secret: { label: 'key', json: 'key', advice: 'Shown this once: store it where the script reads it (an environment variable, a secret store).' },
    addDescription: 'make one; it is printed once',
    nameHelp: 'which script it is for, as the lists show it',
    revokeDescription: 'revoke one: a script using it is refused from its next request',
    addOptions: (add) => add.option('--expires <duration>', 'how long it lasts (90d, 12h; at most 5 years); without it, until revoked'),
    input: (name, o) => ({ name, expiresInSeconds: o.expires === undefined ? null : parseDuration(o.expires, '--expires') }),
    operations: (core) => core.accounts.apiKeys,
    more: [['Expires', (k) => k.expires_at ?? 'never (until revoked)']],
  });
}

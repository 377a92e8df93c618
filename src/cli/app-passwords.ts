/**
 * `gatehouse user app-password add <email> --name N | list <email> | revoke <email> <id>`: an
 * account's passwords for apps that bind to the LDAP directory. The password is printed once.
 */
import type { Command } from 'commander';
import type { AppPasswordView } from '../core';
import type { Io } from './io';
import { registerCredentialCommands } from './named-credentials';

export function registerAppPasswords(user: Command, io: Io): void {
  registerCredentialCommands<AppPasswordView, { name: string }>(user, io, {
    command: 'app-password',
    description: "an account's passwords for apps that sign in over LDAP (one per app, revocable)",
    plural: 'app passwords',
    jsonKey: 'app_password',
    secret: { label: 'password', json: 'secret', advice: 'Shown this once: enter it in the app now.' },
    addDescription: 'make one; it is printed once (an account with a second factor binds to LDAP only with these)',
    nameHelp: 'which app it is for, as the lists show it',
    revokeDescription: 'revoke one: the app it was for can no longer bind with it',
    input: (name) => ({ name }),
    operations: (core) => core.accounts.appPasswords,
  });
}

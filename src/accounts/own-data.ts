/**
 * What Gatehouse holds about a person, as they download it (`user_account/export_data`, the
 * account page's button): the account, its groups, sessions, passkeys (their public parts),
 * whether TOTP is on, app passwords and API keys (by name), SSH public keys and the login shell,
 * the language chosen, linked providers, the apps holding a grant, and the audit entries about the
 * account. Every field is picked by name from an
 * allow-list: never a secret, a hash, a TOTP secret or a recovery code.
 */
import type { Actor } from '../actor';
import type { Services } from '../services';
import { type AccountRow, groupsOf } from '../store/accounts';
import { passkeysOf } from '../store/passkeys';
import { listAppPasswords } from '../store/app-passwords';
import { listApiKeys } from '../store/api-keys';
import { listSshKeys } from '../store/ssh-keys';
import { identitiesOf } from '../store/upstream';
import { readAudit } from '../store/audit';
import { viewAccount } from './views';
import { listSessions } from './sessions';
import { listApps } from './connected-apps';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** The audit entries a download holds at most (the newest). */
const AUDIT_LIMIT = 5000;

export async function exportData(s: Services, actor: Actor, account: AccountRow): Promise<Record<string, unknown>> {
  const db = s.store.root;
  const [view, groups, sessions, passkeys, appPasswords, apiKeys, sshKeys, identities, apps, audit] = await Promise.all([
    viewAccount(s, account),
    groupsOf(db, account.id),
    listSessions(s, account.id, actor.session),
    passkeysOf(db, account.id),
    listAppPasswords(db, account.id),
    listApiKeys(db, account.id),
    listSshKeys(db, account.id),
    identitiesOf(db, account.id),
    listApps(s, account),
    readAudit(db, { account: account.reference_id, limit: AUDIT_LIMIT }),
  ]);
  await s.audit.record('data_exported', actor, { account: account.reference_id });
  return {
    exported_at: new Date(s.clock.now()).toISOString(),
    account: { ...view, origin: account.origin, external_id: account.external_id, language: account.language, login_shell: account.login_shell },
    groups: groups.map((g) => ({ id: g.reference_id, name: g.name, direct: g.direct, through: g.through })),
    sessions: sessions.map((x) => ({
      id: x.id,
      signed_in_at: x.created_at,
      last_seen_at: x.last_used_at,
      address: x.client,
      user_agent: x.user_agent,
      device: x.device,
      amr: x.amr,
      current: x.current,
    })),
    passkeys: passkeys.map((p) => ({
      id: p.reference_id,
      name: p.name,
      credential_id: p.credential_id,
      public_key: p.public_key,
      transports: p.transports,
      synced: p.backed_up,
      created_at: iso(p.created_at),
      last_used_at: iso(p.last_used_at),
    })),
    two_factor: { totp_enabled: account.totp_enabled },
    app_passwords: appPasswords.map((p) => ({ id: p.reference_id, name: p.name, created_at: iso(p.created_at), last_used_at: iso(p.last_used_at) })),
    api_keys: apiKeys.map((k) => ({
      id: k.reference_id,
      name: k.name,
      created_at: iso(k.created_at),
      expires_at: iso(k.expires_at),
      last_used_at: iso(k.last_used_at),
    })),
    ssh_keys: sshKeys.map((k) => ({
      id: k.reference_id,
      key: `${k.key_type} ${k.key_data}${k.comment ? ` ${k.comment}` : ''}`,
      fingerprint: k.fingerprint,
      created_at: iso(k.created_at),
    })),
    linked_providers: identities.map((i) => ({
      id: i.reference_id,
      provider: i.provider,
      provider_name: i.display_name,
      email: i.email,
      created_at: iso(i.created_at),
      last_used_at: iso(i.last_used_at),
    })),
    connected_apps: apps,
    audit: audit.map((a) => ({ at: iso(a.created_at), event: a.event, address: a.client, details: a.details })),
  };
}

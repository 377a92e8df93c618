/**
 * A sign-in from a browser or place the account has not used in 90 days is told by mail (what,
 * where, when, and a link that ends that session); the same browser from the same place again is
 * not. "The same" is the browser's family and system and the address's /24 (IPv4) or /64 (IPv6)
 * (accounts/devices.ts), kept hashed beside the places the signin limits remember
 * (known_signin), for 90 days after its last use. An account's first sign-in under this rule
 * (a new account, or one from before it) is recorded and told to nobody.
 *
 * The mail's link carries a one-time token bound to that one session: it ends that session and
 * nothing else, so it needs no CSRF protection and no sign-in. The token and its mail are written
 * in one transaction (the durable queue sends the mail).
 */
import { createHash } from 'node:crypto';
import type { Actor } from '../actor';
import type { Services } from '../services';
import type { AccountRow } from '../store/accounts';
import { notePlace } from '../store/counters';
import { issueToken } from '../store/account-tokens';
import { inOneTransaction } from '../store/handle';
import { queueMail } from '../deliveries/queue';
import { mailLink, newSigninMessage } from '../mail/messages';
import { accountTranslator } from '../i18n';
import { KNOWN_SIGNIN_MS } from '../runtime/limiter';
import { describeDevice, signinPlace } from './devices';

/** The link ends the session for as long as a session may live idle. */
export const END_SESSION_TTL_SECONDS = 14 * 24 * 60 * 60;
const DAY_MS = 24 * 60 * 60 * 1000;

/** After a session opened: the mail when its browser and place are new to the account. A failure is logged; the sign-in stands. */
export async function noticeNewSignin(s: Services, actor: Actor, account: AccountRow, sessionId: string): Promise<void> {
  try {
    const place = await signinPlace(actor.userAgent, actor.client);
    const key = `seen:${createHash('sha256').update(place).digest('base64url')}`;
    if ((await notePlace(s.store.root, account.id, key, KNOWN_SIGNIN_MS, DAY_MS)) !== 'new') return;
    const device = await describeDevice(actor.userAgent);
    const at = s.clock.now();
    await inOneTransaction(s.store.root, async (tx) => {
      const token = await issueToken(tx, account.id, 'end_session', account.email_key, END_SESSION_TTL_SECONDS, sessionId);
      const link = mailLink(s.config, 'end_session', token);
      await queueMail(
        tx,
        newSigninMessage(
          link,
          account.email,
          account.name,
          { ...device, address: actor.client, at, ttlSeconds: END_SESSION_TTL_SECONDS },
          accountTranslator(s.messages, account),
        ),
        'new_signin',
      );
    });
    s.sender.nudge();
    await s.audit.record('new_signin_told', actor, { account: account.reference_id, session: sessionId });
  } catch (err) {
    s.logger.warn('new_signin_not_told', { account: account.reference_id, code: (err as { code?: string }).code ?? 'error' });
  }
}

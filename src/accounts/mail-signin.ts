/**
 * Sign-in by a code mailed to the address (contract: ways in for people without a password
 * manager). Off until the operator opens the `signin_by_mail` action to guests.
 *
 *   - Asking: the same answer, after the same work, whether or not the address has an account:
 *     the limits (per client address and per typed address) are counted for every address, a
 *     request handle is made, and the rest (the account's lookup, its own hourly limit, the row
 *     and the mail, queued in one transaction) happens after the answer. An address without an
 *     account gets a row too, which no code spends.
 *   - The code: 8 characters of ABCDEFGHJKMNPQRSTUVWXYZ23456789 (about 40 bits), valid 10
 *     minutes, kept as a hash. Each code typed first takes one of five tries (one conditional
 *     write: of a burst of guesses sent at once, five are looked at; a right one gives it back); a right one is spent only when
 *     the rest of the sign-in holds (after the account's TOTP code: a wrong or missing one leaves it
 *     to be typed again), by another conditional write whose row count decides, so of four requests
 *     sent at once one signs in. Wrong codes count toward the account's sign-in lockout too.
 *   - Bound to the browser that asked: the row keeps a hash of that browser's cookie (the pages'
 *     device cookie; an API client gets a secret of its own); the mailed link carries the handle and
 *     the code, and signs in only where that cookie is.
 *   - One factor: the session says `amr` ["otp"]; like a provider's sign-in, it is not enough on
 *     its own to add a way in to an account that has another (recent-signin.ts). An account with
 *     TOTP is asked for its code too.
 */
import { randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors';
import type { Actor } from '../actor';
import type { Services } from '../services';
import { findAccountByEmailKey, findAccountById, type AccountRow } from '../store/accounts';
import { findMailCode, giveBackMailCodeTry, insertMailCode, sha256, spendMailCode, takeMailCodeTry } from '../store/mail-codes';
import { queueMail } from '../deliveries/queue';
import { signinCodeMessage } from '../mail/messages';
import { accountTranslator } from '../i18n';
import { normalizeEmail } from './validate';
import { signIn, type SigninResult } from './signin';

export const MAIL_CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
export const MAIL_CODE_LENGTH = 8;
export const MAIL_CODE_TTL_MS = 10 * 60 * 1000;

const MAIL_WAY = { method: 'mail', session: true } as const;

/** A new code: each character drawn uniformly (randomInt has no modulo bias). */
export function newMailCode(): string {
  let code = '';
  for (let i = 0; i < MAIL_CODE_LENGTH; i++) code += MAIL_CODE_ALPHABET[randomInt(MAIL_CODE_ALPHABET.length)];
  return code;
}

/** A typed code as it is compared: upper case, without spaces or dashes; null when it cannot be one. */
export function typedCode(raw: string): string | null {
  const code = raw.toUpperCase().replace(/[\s-]/g, '');
  return code.length === MAIL_CODE_LENGTH && [...code].every((c) => MAIL_CODE_ALPHABET.includes(c)) ? code : null;
}

const codeHashOf = (handle: string, code: string) => sha256(`${handle}\n${code}`);

/** The link the mail carries: the handle in the query (the page says at once where it does not sign in), the code in the fragment. */
export const mailCodeLink = (publicUrl: string, handle: string, code: string) => `${publicUrl}/signin/mail/link?request=${handle}#token=${code}`;

const HANDLE = /^[A-Za-z0-9_-]{22}$/;

/**
 * Asks for a code for `email`, for the browser (or API client) whose secret is `binding`: the
 * request's handle. The same answer for every address.
 */
export async function requestMailCode(s: Services, actor: Actor, email: string, binding: string): Promise<{ handle: string }> {
  const { email: typed, key } = normalizeEmail(email);
  await s.limiter.mailCodeRequest(key, actor);
  const handle = randomBytes(16).toString('base64url');
  const code = newMailCode();
  const row = { handle_hash: sha256(handle), binding_hash: sha256(binding), code_hash: codeHashOf(handle, code), email_key: key };
  s.tasks.run('mail_code_failed', { account: null }, async () => {
    const expires_at = s.clock.now() + MAIL_CODE_TTL_MS;
    const account = await findAccountByEmailKey(s.store.root, key);
    const mailable = account !== undefined && !account.disabled && (await s.limiter.mailCodeForAccount(account.reference_id));
    if (!account || !mailable) {
      // Kept all the same: a code typed for it is refused, and counted, as a wrong one is.
      await insertMailCode(s.store.root, { ...row, account_id: null, expires_at });
      if (account && !account.disabled) await s.audit.record('mail_code_limited', actor, { account: account.reference_id });
      return;
    }
    await s.store.transaction(async (tx) => {
      await insertMailCode(tx, { ...row, account_id: account.id, expires_at });
      await queueMail(
        tx,
        signinCodeMessage(
          mailCodeLink(s.config.publicUrl, handle, code),
          account.email,
          account.name,
          code,
          MAIL_CODE_TTL_MS / 1000,
          accountTranslator(s.messages, account),
        ),
        'signin_code',
      );
    });
    s.sender.nudge();
    await s.audit.record('mail_code_sent', actor, { account: account.reference_id });
    s.logger.info('mail_code_sent', { account: account.reference_id, via: s.mailer.kind, typed: typed === account.email ? 'same' : 'other' });
  });
  return { handle };
}

const notThisBrowser = () =>
  new AppError(
    'token_invalid',
    'this code was asked for in another browser (or the request has ended): type it in the browser where you asked for it, or ask for a new one here',
  );

/** Whether the browser whose secret is `binding` asked for this request (the link's page says so before any code is typed). */
export async function mailCodeBrowser(s: Services, handle: string, binding: string | null): Promise<'this' | 'other' | 'gone'> {
  if (!HANDLE.test(handle)) return 'gone';
  const row = await findMailCode(s.store.root, sha256(handle));
  if (!row || row.used_at !== null || row.expires_at <= s.clock.now()) return 'gone';
  return binding !== null && row.binding_hash === sha256(binding) ? 'this' : 'other';
}

/**
 * A typed (or linked) code, through the one sign-in routine. `secondFactor`: the TOTP code the
 * request carries (the action), or a step of its own (the pages).
 */
export async function mailCodeSignin(
  s: Services,
  actor: Actor,
  input: { handle: string; binding: string | null; code: string },
  secondFactor: { check: Record<string, unknown> } | 'step',
): Promise<SigninResult> {
  if (!HANDLE.test(input.handle) || input.binding === null) throw notThisBrowser();
  const row = await findMailCode(s.store.root, sha256(input.handle));
  // Another browser's request is refused without counting a try: it cannot spend it, and must not wear it out.
  if (!row || row.binding_hash !== sha256(input.binding)) throw notThisBrowser();
  const code = typedCode(input.code);
  return signIn(s, actor, {
    ...MAIL_WAY,
    limitKey: row.email_key,
    async claim() {
      let account: AccountRow | undefined = row.account_id === null ? undefined : await findAccountById(s.store.root, row.account_id);
      // Bound to the address it was mailed to: after an email change, an older code proves nothing.
      if (account && account.email_key !== row.email_key) account = undefined;
      return { account: account ?? null, limitKey: row.email_key };
    },
    async prove(account) {
      // The try is taken before the code is looked at: none left, and nothing is compared.
      const tried = await takeMailCodeTry(s.store.root, row.id);
      const typed = Buffer.from(codeHashOf(input.handle, code ?? ''), 'hex');
      const right = timingSafeEqual(typed, Buffer.from(row.code_hash, 'hex'));
      if (tried && right && code !== null && account) {
        // Only a wrong code wears the request out: a right one whose TOTP code is missing or
        // wrong (that has limits of its own) may be sent again.
        await giveBackMailCodeTry(s.store.root, row.id);
        return null;
      }
      return account ? 'wrong_mail_code' : 'unknown_email';
    },
    spend: () => spendMailCode(s.store.root, row.id, row.binding_hash, row.code_hash),
    refusal: () =>
      new AppError('invalid_credentials', 'the code is wrong, has expired or was used already (five wrong codes end it): check it, or ask for a new one'),
    secondFactor,
    session: true,
  });
}

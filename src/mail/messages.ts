/**
 * The messages Gatehouse sends: plain text. Links are built from --public-url only, never from a
 * request's Host header, and carry the token in the fragment (#), which browsers do not send to
 * servers, so it stays out of access logs and link scanners' requests.
 */
import type { MailMessage } from './mailer';
import type { Translator } from '../i18n';

/** The link a mail carries: the app's template (--verify-url, --reset-url) or Gatehouse's own page. */
export function mailLink(
  config: { publicUrl: string; verifyUrl: string | null; resetUrl: string | null },
  kind: 'verify' | 'reset' | 'unlock' | 'end_session',
  token: string,
): string {
  const template = kind === 'verify' ? config.verifyUrl : kind === 'reset' ? config.resetUrl : null;
  if (template !== null) return template.split('{token}').join(encodeURIComponent(token));
  return `${config.publicUrl}/${{ verify: 'verify-email', reset: 'reset-password', unlock: 'unlock', end_session: 'end-session' }[kind]}#token=${token}`;
}

export function verificationMessage(link: string, to: string, name: string, token: string, ttlSeconds: number, tr: Translator): MailMessage {
  return {
    to,
    subject: tr.t('mail.verify.subject'),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t('mail.verify.body'),
      '',
      `  ${link}`,
      '',
      tr.t('mail.verify.code'),
      '',
      `  ${token}`,
      '',
      tr.t('mail.link_once', { duration: tr.duration(ttlSeconds) }),
      tr.t('mail.verify.ignore'),
    ].join('\n'),
  };
}

export function resetMessage(link: string, to: string, name: string, token: string, ttlSeconds: number, tr: Translator): MailMessage {
  return {
    to,
    subject: tr.t('mail.reset.subject'),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t('mail.reset.body'),
      '',
      `  ${link}`,
      '',
      tr.t('mail.reset.code'),
      '',
      `  ${token}`,
      '',
      `${tr.t('mail.link_once', { duration: tr.duration(ttlSeconds) })} ${tr.t('mail.reset.sessions')}`,
      tr.t('mail.reset.ignore'),
    ].join('\n'),
  };
}

export function unlockMessage(link: string, to: string, name: string, token: string, ttlSeconds: number, tr: Translator): MailMessage {
  return {
    to,
    subject: tr.t('mail.unlock.subject'),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t('mail.unlock.body'),
      tr.t('mail.unlock.slower'),
      '',
      tr.t('mail.unlock.link'),
      '',
      `  ${link}`,
      '',
      tr.t('mail.unlock.code'),
      '',
      `  ${token}`,
      '',
      tr.t('mail.link_once', { duration: tr.duration(ttlSeconds) }),
      tr.t('mail.unlock.not_you'),
    ].join('\n'),
  };
}

/**
 * To the account's address, when an SSH key was added to it or removed (a key is a way in to
 * every host that reads the directory): which key, and what to do if it was not them.
 */
export function sshKeyMessage(
  to: string,
  name: string,
  change: 'added' | 'removed',
  key: { description: string; fingerprint: string; comment: string },
  tr: Translator,
): MailMessage {
  return {
    to,
    subject: tr.t(change === 'added' ? 'mail.ssh.added.subject' : 'mail.ssh.removed.subject'),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t(change === 'added' ? 'mail.ssh.added.body' : 'mail.ssh.removed.body'),
      '',
      `  ${key.description} ${key.fingerprint}${key.comment ? ` ${key.comment}` : ''}`,
      '',
      tr.t(change === 'added' ? 'mail.ssh.added.not_you' : 'mail.ssh.removed.not_you'),
    ].join('\n'),
  };
}

/**
 * To the old address, when a provisioning service (SCIM) moved an account that has its own way in
 * (a password, a passkey) to a new one: the new address can now receive its reset links.
 */
export function emailMovedMessage(to: string, name: string, newAddress: string, tr: Translator): MailMessage {
  return {
    to,
    subject: tr.t('mail.email_moved.subject'),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t('mail.email_moved.body'),
      '',
      `  ${newAddress}`,
      '',
      tr.t('mail.email_moved.after'),
      tr.t('mail.email_moved.not_you'),
    ].join('\n'),
  };
}

/** To an address with no account yet: in the server's default language. */
export function invitationMessage(link: string, to: string, ttlSeconds: number, tr: Translator): MailMessage {
  return {
    to,
    subject: tr.t('mail.invitation.subject'),
    text: [
      tr.t('mail.invitation.hello'),
      '',
      tr.t('mail.invitation.body'),
      '',
      `  ${link}`,
      '',
      tr.t('mail.link_once', { duration: tr.duration(ttlSeconds) }),
      tr.t('mail.invitation.ignore'),
    ].join('\n'),
  };
}

/** A sign-in code by mail: the code to type, and a link that signs in only in the browser that asked. */
export function signinCodeMessage(link: string, to: string, name: string, code: string, ttlSeconds: number, tr: Translator): MailMessage {
  return {
    to,
    subject: tr.t('mail.signin_code.subject', { code }),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t('mail.signin_code.body'),
      '',
      `  ${code}`,
      '',
      tr.t('mail.signin_code.link'),
      '',
      `  ${link}`,
      '',
      tr.t('mail.signin_code.once', { duration: tr.duration(ttlSeconds) }),
      tr.t('mail.signin_code.ignore'),
    ].join('\n'),
  };
}

/** Told to the person when their account's recovery link was used: its session may add a way in for `windowSeconds`. */
export function recoveryUsedMessage(to: string, name: string, windowSeconds: number, tr: Translator): MailMessage {
  return {
    to,
    subject: tr.t('mail.recovery_used.subject'),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t('mail.recovery_used.body', { duration: tr.duration(windowSeconds) }),
      tr.t('mail.recovery_used.not_you'),
    ].join('\n'),
  };
}

/**
 * The browser as the reader's language says it: "Firefox on Windows", "Firefox unter Windows".
 * Only the names the user-agent parser knows: whoever signs in writes the User-Agent, and the
 * mail must not carry their words ("an unknown device" instead).
 */
function deviceIn(tr: Translator, d: { browser: string | null; system: string | null }): string {
  if (d.browser && d.system) return tr.t('mail.new_signin.device', { browser: d.browser, system: d.system });
  return d.browser ?? d.system ?? tr.t('mail.new_signin.unknown_device');
}

/**
 * A sign-in from a browser or place the account has not used lately: what, where, when, and a
 * link that ends that one session (the link works once and ends nothing else).
 */
export function newSigninMessage(
  link: string,
  to: string,
  name: string,
  o: { browser: string | null; system: string | null; address: string | null; at: number; ttlSeconds: number },
  tr: Translator,
): MailMessage {
  const facts: Array<[string, string]> = [
    [tr.t('mail.new_signin.browser'), deviceIn(tr, o)],
    [tr.t('mail.new_signin.address'), o.address ?? tr.t('mail.new_signin.unknown_address')],
    [tr.t('mail.new_signin.when'), tr.dateTime(o.at)],
  ];
  const width = Math.max(...facts.map(([label]) => label.length));
  return {
    to,
    subject: tr.t('mail.new_signin.subject'),
    text: [
      tr.t('mail.hello', { name }),
      '',
      tr.t('mail.new_signin.body'),
      '',
      ...facts.map(([label, value]) => `  ${label.padEnd(width)} ${value}`),
      '',
      tr.t('mail.new_signin.you'),
      tr.t('mail.new_signin.not_you'),
      '',
      `  ${link}`,
      '',
      tr.t('mail.new_signin.once', { duration: tr.duration(o.ttlSeconds) }),
      tr.t('mail.new_signin.sessions'),
    ].join('\n'),
  };
}

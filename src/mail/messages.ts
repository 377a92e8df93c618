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

/** A duration in the mail's language (English as it always read: 1 hour, 15 minutes). */
const durationFor = (tr: Translator, seconds: number) => (tr.lang === 'en' ? humanDuration(seconds) : tr.duration(seconds));

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
      tr.t('mail.link_once', { duration: durationFor(tr, ttlSeconds) }),
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
      `${tr.t('mail.link_once', { duration: durationFor(tr, ttlSeconds) })} ${tr.t('mail.reset.sessions')}`,
      tr.t('mail.reset.ignore'),
    ].join('\n'),
  };
}

export function unlockMessage(link: string, to: string, name: string, token: string, ttlSeconds: number): MailMessage {
  return {
    to,
    subject: 'Someone is trying to sign in to your account',
    text: [
      `Hello ${name},`,
      '',
      'Many signins to your account failed in the last minutes, from places you have not signed in from.',
      'Signins from new places now wait longer after each failure; where you signed in before, nothing changes.',
      '',
      'If this was you and you are held up, open this link to sign in at once:',
      '',
      `  ${link}`,
      '',
      'or send this code to the unlock_signin action:',
      '',
      `  ${token}`,
      '',
      `The link works once and expires in ${humanDuration(ttlSeconds)}.`,
      'If it was not you, your password held. Consider a longer password and two-factor authentication.',
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
): MailMessage {
  return {
    to,
    subject: change === 'added' ? 'An SSH key was added to your account' : 'An SSH key was removed from your account',
    text: [
      `Hello ${name},`,
      '',
      change === 'added'
        ? 'This SSH key was added to your account. It now signs you in to the servers that read the directory:'
        : 'This SSH key was removed from your account. It no longer signs you in to the servers that read the directory:',
      '',
      `  ${key.description} ${key.fingerprint}${key.comment ? ` ${key.comment}` : ''}`,
      '',
      change === 'added'
        ? 'If it was not you, remove the key on your account page at once and tell your administrator.'
        : 'If it was not you, tell your administrator.',
    ].join('\n'),
  };
}

/**
 * To the old address, when a provisioning service (SCIM) moved an account that has its own way in
 * (a password, a passkey) to a new one: the new address can now receive its reset links.
 */
export function emailMovedMessage(to: string, name: string, newAddress: string): MailMessage {
  return {
    to,
    subject: 'The email address of your account changed',
    text: [
      `Hello ${name},`,
      '',
      `Your organization's provisioning service changed the email address of your account from this one to`,
      '',
      `  ${newAddress}`,
      '',
      'Mail about the account, password reset links included, now goes there.',
      'If you did not expect this, tell your administrator at once.',
    ].join('\n'),
  };
}

export function humanDuration(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400} day${seconds === 86400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}

export function invitationMessage(link: string, to: string, ttlSeconds: number): MailMessage {
  return {
    to,
    subject: 'You are invited to an account',
    text: [
      'Hello,',
      '',
      'An administrator invited you to create an account for this address. To choose your name and a',
      'password (or a passkey), open:',
      '',
      `  ${link}`,
      '',
      `The link works once and expires in ${humanDuration(ttlSeconds)}.`,
      'If you did not expect this, you can ignore this message: nothing is made until you open the link.',
    ].join('\n'),
  };
}

/** A sign-in code by mail: the code to type, and a link that signs in only in the browser that asked. */
export function signinCodeMessage(link: string, to: string, name: string, code: string, ttlSeconds: number): MailMessage {
  return {
    to,
    subject: `Your sign-in code: ${code}`,
    text: [
      `Hello ${name},`,
      '',
      'Someone (hopefully you) asked to sign in with a code sent to this address. Type this code on the sign-in page:',
      '',
      `  ${code}`,
      '',
      'or open this link in the same browser:',
      '',
      `  ${link}`,
      '',
      `The code works once and expires in ${humanDuration(ttlSeconds)}. The link signs in only in the browser where the code was asked for.`,
      'If you did not ask for it, ignore this message: nobody can sign in with it from another browser.',
    ].join('\n'),
  };
}

/** A recovery link an administrator made: it opens the account page for a short while, to add a passkey or a password. */
export function recoveryMessage(link: string, to: string, name: string, ttlSeconds: number): MailMessage {
  return {
    to,
    subject: 'A recovery link for your account',
    text: [
      `Hello ${name},`,
      '',
      'An administrator made a link that signs you in to your account page, to add a new passkey or a password:',
      '',
      `  ${link}`,
      '',
      `It works once and expires in ${humanDuration(ttlSeconds)}.`,
      'If you did not ask for this, tell your administrator at once.',
    ].join('\n'),
  };
}

/** Told to the person when their account's recovery link was used. */
export function recoveryUsedMessage(to: string, name: string): MailMessage {
  return {
    to,
    subject: 'Your account was opened with a recovery link',
    text: [
      `Hello ${name},`,
      '',
      'A recovery link an administrator made for your account was just used to sign in. It may add a passkey or a password in the next 15 minutes.',
      'If this was not you, tell your administrator at once.',
    ].join('\n'),
  };
}

/**
 * A sign-in from a browser or place the account has not used lately: what, where, when, and a
 * link that ends that one session (the link works once and ends nothing else).
 */
export function newSigninMessage(
  link: string,
  to: string,
  name: string,
  o: { device: string; address: string | null; at: number; ttlSeconds: number },
): MailMessage {
  return {
    to,
    subject: 'A new sign-in to your account',
    text: [
      `Hello ${name},`,
      '',
      'Your account was just signed in to from a browser or place it has not used lately:',
      '',
      `  Browser: ${o.device}`,
      `  Address: ${o.address ?? 'unknown'}`,
      `  When:    ${new Date(o.at).toISOString().replace('T', ' ').slice(0, 16)} UTC`,
      '',
      'If this was you, there is nothing to do.',
      'If it was not, end that session now with this link, then change your password:',
      '',
      `  ${link}`,
      '',
      `The link ends only that session, works once and expires in ${humanDuration(o.ttlSeconds)}.`,
      'You see every session, and can end any of them, on your account page.',
    ].join('\n'),
  };
}

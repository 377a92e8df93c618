/**
 * Outgoing mail: SMTP through nodemailer (--smtp-url), or, without SMTP, each message written as
 * an .eml file to <data-dir>/outbox/ (built by nodemailer too, so both paths send the same bytes).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { Logger } from '../log';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Where mail goes, for logs and the startup line (never credentials). */
  readonly kind: 'smtp' | 'outbox';
  /** The SMTP server (host and port, no credentials) or the outbox folder: what a person is told. */
  readonly destination: string;
  send(message: MailMessage): Promise<void>;
  close(): void;
}

type Nodemailer = (typeof import('nodemailer'))['default'];

/** The transport is made (and nodemailer loaded) at the first message, not at start-up. */
function lazyTransport<T extends { close(): void }>(make: (nodemailer: Nodemailer) => T) {
  let transport: Promise<T> | null = null;
  return {
    get: () => (transport ??= import('nodemailer').then((m) => make(m.default))),
    // Closing at shutdown: a transport that never connected has nothing to close, and one that
    // failed to be made already failed the message that asked for it (its delivery records why).
    close: () => void transport?.then((t) => t.close()).catch(() => undefined), // reason: reported at its first use, above
  };
}

/**
 * The message for nodemailer with its envelope spelled out: the one stored address is the one
 * recipient, never a list or a display name parsed out of it (an address such as
 * `ceo<mallory@evil.example>` would otherwise send the mail to Mallory).
 */
function message(config: Config, m: { to: string; subject: string; text: string }) {
  const from = /<([^<>]+)>\s*$/.exec(config.mailFrom)?.[1] ?? config.mailFrom;
  return { from: config.mailFrom, to: { name: '', address: m.to }, subject: m.subject, text: m.text, envelope: { from, to: [m.to] } };
}

/**
 * The outbox's copy is read by people, who copy links out of it: a quoted-printable body (which
 * nodemailer picks for any line over 76 characters) is decoded and labelled 8bit, so a link is
 * one unbroken line and `=` is not `=3D`. Mail sent by SMTP keeps nodemailer's encoding.
 */
export function readable(eml: Buffer): Buffer {
  const text = eml.toString('latin1');
  const split = text.indexOf('\n\n');
  const head = text.slice(0, split);
  if (split < 0 || !/^Content-Transfer-Encoding: quoted-printable$/im.test(head) || /^Content-Type: multipart\//im.test(head)) return eml;
  const body = text
    .slice(split + 2)
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return Buffer.from(head.replace(/^Content-Transfer-Encoding: quoted-printable$/im, 'Content-Transfer-Encoding: 8bit') + '\n\n' + body, 'latin1');
}

/** Every message's fate is logged: where it went (never its text: it carries links that sign in). */
export function createMailer(config: Config, logger?: Logger): Mailer {
  if (config.smtpUrl) {
    // Bounded waits: a try must end well within the queue's claim on the message (runtime/sender.ts).
    const smtp = lazyTransport((nodemailer) =>
      nodemailer.createTransport(
        { url: config.smtpUrl!, connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 30_000 },
        { from: config.mailFrom },
      ),
    );
    const server = new URL(config.smtpUrl);
    const destination = `${server.hostname}:${server.port || (server.protocol === 'smtps:' ? 465 : 587)}`;
    return {
      kind: 'smtp',
      destination,
      async send(m) {
        await (await smtp.get()).sendMail(message(config, m));
        logger?.info('mail_sent', { via: 'smtp', server: destination });
      },
      close: smtp.close,
    };
  }
  const outbox = path.join(config.dataDir, 'outbox');
  const builder = lazyTransport((nodemailer) => nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' }));
  return {
    kind: 'outbox',
    destination: outbox,
    async send(m) {
      const info = await (await builder.get()).sendMail(message(config, m));
      await fs.promises.mkdir(outbox, { recursive: true, mode: 0o700 });
      const file = path.join(outbox, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}.eml`);
      // Written then renamed: a reader of the outbox never sees half a message.
      await fs.promises.writeFile(file + '.tmp', readable(info.message as Buffer), { mode: 0o600 });
      await fs.promises.rename(file + '.tmp', file);
      logger?.info('mail_written', { via: 'outbox', file });
    },
    close: builder.close,
  };
}

/** A real SMTP server (smtp-server) on port 0 that keeps what it receives. */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export interface Mail {
  to: string[];
  raw: string;
  /** The body with quoted-printable soft breaks and escapes undone. */
  text: string;
}

export interface MailSink {
  url: string;
  mails: Mail[];
  /** Waits for a message to `to` (the n-th one, counting from 1). */
  next(to: string, n?: number, timeoutMs?: number): Promise<Mail>;
  /** Makes the server refuse messages (to test mail failures). */
  failing: boolean;
}

function decode(raw: string): string {
  const [, ...rest] = raw.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (!/content-transfer-encoding:\s*quoted-printable/i.test(raw)) return body;
  return body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
}

export async function startSmtp(t: Test): Promise<MailSink> {
  const sink: MailSink = {
    url: '',
    mails: [],
    failing: false,
    async next(to, n = 1, timeoutMs = 10000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const matching = sink.mails.filter((m) => m.to.includes(to.toLowerCase()));
        if (matching.length >= n) return matching[n - 1];
        if (Date.now() > until) throw new Error(`no mail #${n} to ${to} within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(_address, _session, cb) {
      if (sink.failing) return cb(new Error('mailbox unavailable'));
      cb();
    },
    onData(stream, session, cb) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (raw += d));
      stream.on('end', () => {
        sink.mails.push({ to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()), raw, text: decode(raw) });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  sink.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return sink;
}

/** The token in a Gatehouse message (the line after "send this code"). */
export function tokenIn(mail: Mail): string {
  const m = /#token=([A-Za-z0-9_-]{30,})/.exec(mail.text);
  if (!m) throw new Error(`no token in mail:\n${mail.text}`);
  return m[1];
}

/**
 * A webhook receiver on port 0 that verifies every request with the `standardwebhooks` library
 * (as an app that receives Gatehouse's events would) and answers with the statuses it is given.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  /** What Webhook.verify returned: the parsed body, or null when the signature did not verify. */
  verified: { type: string; timestamp: string; data: Record<string, any> } | null;
  body: string;
  status: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The secret to verify with (set after `webhook add`). */
  secret: string;
  /** Statuses to answer, in order; 204 once they run out. */
  answers: number[];
  /** Take requests but never answer them (a delivery stays in flight). */
  hold: boolean;
  next(n?: number, timeoutMs?: number): Promise<Received>;
}

export async function startReceiver(t: Test): Promise<Receiver> {
  const r: Receiver = {
    url: '',
    received: [],
    secret: '',
    answers: [],
    hold: false,
    async next(n = 1, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (r.received.length < n) {
        if (Date.now() > until) throw new Error(`no webhook #${n} within ${timeoutMs} ms`);
        await new Promise((res) => setTimeout(res, 20));
      }
      return r.received[n - 1];
    },
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let verified: Received['verified'];
      try {
        verified = new Webhook(r.secret).verify(body, req.headers as Record<string, string>) as Received['verified'];
      } catch {
        verified = null;
      }
      if (r.hold) {
        r.received.push({ id: String(req.headers['webhook-id']), verified, body, status: 0 });
        return;
      }
      const status = r.answers.shift() ?? 204;
      r.received.push({ id: String(req.headers['webhook-id']), verified, body, status });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/gatehouse`;
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return r;
}

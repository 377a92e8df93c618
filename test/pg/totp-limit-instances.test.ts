// The TOTP failure limit across two packaged instances on one PostgreSQL database: code steps
// opened by Ada's password, their wrong codes sent at once to both instances; at most five are
// checked (the attempt is taken by one conditional write before the code is checked), the rest
// are refused, and a right code is refused while the limit holds (test/attacks/totp-at-once.test.ts).
import t from 'tap';
import { generate } from 'otplib';
import { twoInstances } from '../helpers/pg';

const PW = 'totp limit instances password';

t.test('wrong codes sent at once to two instances: five checked, the rest 429', async (t) => {
  const two = await twoInstances(t, PW);
  if (!two) return;
  const { a, b } = two;
  const { secret } = await two.totpOn();

  /** A browser (one cookie jar) that sent the right password on `base`: its code step. */
  const opened = async (base: string) => {
    const jar = new Map<string, string>();
    const go = async (at: string, path: string, form?: Record<string, string>) => {
      const res = await fetch(`${at}${path}`, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        body: form ? new URLSearchParams({ csrf: jar.get('__Host-gatehouse_csrf') ?? '', ...form }).toString() : undefined,
      });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';');
        jar.set(pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1));
      }
      return { status: res.status, text: await res.text() };
    };
    await go(base, '/signin');
    const asked = await go(base, '/signin', { email: 'admin@example.com', password: PW });
    return { go, step: /name="step" value="([^"]+)"/.exec(asked.text)?.[1] ?? '' };
  };
  const right = await generate({ secret });
  const wrong = (i: number) => {
    const c = String(100000 + i * 7919).slice(-6);
    return c === right ? String((Number(c) + 1) % 1_000_000).padStart(6, '0') : c;
  };
  const steps = await Promise.all(Array.from({ length: 24 }, (_, i) => opened(i % 2 ? b.url : a.url)));
  t.ok(
    steps.every((x) => x.step),
    'every password opened a code step',
  );
  // Each step finished on the other instance than the one that opened it, all at once.
  const answers = await Promise.all(steps.map((x, i) => x.go(i % 2 ? a.url : b.url, '/signin/code', { step: x.step, otp: wrong(i) })));
  const statuses = answers.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 401).length, 5, 'exactly five codes checked');
  t.equal(statuses.filter((s) => s === 429).length, 24 - 5, 'the rest refused');
  const fresh = await opened(b.url);
  t.equal((await fresh.go(a.url, '/signin/code', { step: fresh.step, otp: await generate({ secret }) })).status, 429, 'a right code is refused while locked');
});

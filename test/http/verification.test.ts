// Email verification over a real SMTP server: once, bound to the address, expiring.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { errorCode, PASSWORD, setSignup, startTestServer, tokenOf } from '../helpers/server';
import { manualClock } from '../helpers/clock';
import { startSmtp, tokenIn } from '../helpers/smtp';

t.test('signup mails a link; it verifies once; a second use is rejected', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url, publicUrl: 'https://id.example.org' });
  t.equal((await s.signup('dana@example.com')).status, 200);
  const mail = await smtp.next('dana@example.com');
  t.match(mail.raw, /Subject: Confirm your email address/);
  t.match(mail.text, /https:\/\/id\.example\.org\/verify-email#token=/, 'links come from --public-url');
  const token = tokenIn(mail);
  t.ok(token.length >= 43, 'at least 256 bits, base64url');
  const stored = await s.db('account_token').first();
  t.not(stored.token_hash, token, 'only a hash is stored');
  t.notOk(JSON.stringify(stored).includes(token));

  const first = await s.action('user_account', 'verify_email', { token });
  t.equal(first.status, 200);
  const me = await s.call('GET', '/api/user_account', { token: await s.signin('dana@example.com') });
  t.equal(me.body.data[0].attributes.email_verified, true);
  const again = await s.action('user_account', 'verify_email', { token });
  t.equal(again.status, 400, 'reuse after successful verification is rejected');
  t.equal(errorCode(again), 'token_invalid');
  for (const bad of ['x', 'A'.repeat(43), 42]) {
    const r = await s.action('user_account', 'verify_email', { token: bad });
    t.equal(r.status, 400, `bad token ${String(bad).slice(0, 5)}`);
  }
  t.notOk(s.logs.join('').includes(token), 'the token never reaches the log');
});

t.test('an expired verification token is rejected (short TTL by flag)', async (t) => {
  const smtp = await startSmtp(t);
  const clock = manualClock();
  const s = await startTestServer(t, { smtpUrl: smtp.url, verificationTtl: '1' }, undefined, { clock });
  await s.signup('erin@example.com');
  const token = tokenIn(await smtp.next('erin@example.com'));
  clock.advance(1200);
  const r = await s.action('user_account', 'verify_email', { token });
  t.equal(r.status, 400);
  t.equal(errorCode(r), 'token_expired');
});

t.test('request_verification sends a new link; a link is bound to the address it was sent to', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url });
  await s.signup('fay@example.com');
  const atSignup = tokenIn(await smtp.next('fay@example.com'));
  const token = await s.signin('fay@example.com');
  const r = await s.action('user_account', 'request_verification', {}, token);
  t.equal(r.status, 200);
  const second = tokenIn(await smtp.next('fay@example.com', 2));
  t.not(second, atSignup);
  // Change the address: links sent to the old one prove nothing any more.
  const changed = await s.action('user_account', 'change_email', { password: PASSWORD, email: 'fay.new@example.com' }, token);
  t.equal(changed.status, 200);
  const toNew = tokenIn(await smtp.next('fay.new@example.com'));
  const old = await s.action('user_account', 'verify_email', { token: second });
  t.equal(old.status, 400, 'a link for the old address is refused');
  t.equal((await s.action('user_account', 'verify_email', { token: toNew })).status, 200);
  const already = await s.action('user_account', 'request_verification', {}, tokenOf(changed));
  t.match(already.body[0].Attributes.message, /already verified/);
});

t.test('--require-verified-email: signin waits for verification', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url, requireVerifiedEmail: true });
  await s.signup('gus@example.com');
  const r = await s.action('user_account', 'signin', { email: 'gus@example.com', password: PASSWORD });
  t.equal(r.status, 403);
  t.equal(errorCode(r), 'email_unverified');
  t.notOk(
    r.body.some((i: { ResponseType: string }) => i.ResponseType === 'client.store.set'),
    'no token',
  );
  await s.action('user_account', 'verify_email', { token: tokenIn(await smtp.next('gus@example.com')) });
  t.ok(await s.signin('gus@example.com'));
});

t.test('without SMTP, messages are written to the outbox; while SMTP is down, the mail waits in the queue', async (t) => {
  const s = await startTestServer(t);
  await s.signup('hal@example.com');
  const token = await s.signin('hal@example.com');
  t.equal((await s.action('user_account', 'request_verification', {}, token)).status, 200);
  await s.core.settle();
  const outbox = path.join(s.dataDir, 'outbox');
  const files = fs.readdirSync(outbox).filter((f) => f.endsWith('.eml'));
  t.equal(files.length, 1);
  const eml = fs.readFileSync(path.join(outbox, files[0]), 'utf8');
  t.match(eml, /To: hal@example.com/);
  t.match(eml, /Confirm your email address/);

  const smtp = await startSmtp(t);
  smtp.failing = true;
  const clock = manualClock();
  const s2 = await startTestServer(t, { smtpUrl: smtp.url }, undefined, { clock });
  await setSignup(s2, await (async () => (await s2.signup('ida@example.com'), s2.signin('ida@example.com')))(), 2097057);
  const ida = await s2.signin('ida@example.com');
  const asked = await s2.action('user_account', 'request_verification', {}, ida);
  t.equal(asked.status, 200, 'accepted: the mail is queued, not sent during the request');
  await s2.core.settle();
  const queued = await s2.db('delivery').where({ kind: 'mail', topic: 'verification', state: 'pending' });
  t.equal(queued.length, 2, "the refused mails wait in the queue (signup's and the one asked for)");
  t.ok(
    queued.every((q: { attempts: number; last_error: string | null }) => q.attempts === 1 && q.last_error),
    'with their try and error recorded',
  );
  t.match(s2.logs.join(''), /"event":"delivery_retry"/);
  smtp.failing = false;
  clock.advance(10_000);
  await s2.core.settle();
  await smtp.next('ida@example.com', 2);
  const answers = [];
  for (const mail of smtp.mails) answers.push((await s2.action('user_account', 'verify_email', { token: tokenIn(mail) })).status);
  t.ok(answers.includes(200), 'the link in a late mail works');
  t.equal((await s2.db('delivery').where({ state: 'delivered' })).length, 2, 'both delivered');
});

// The device authorization grant (RFC 8628), polled by hand as the RFC says, with the person's
// part in Chromium on Gatehouse's /device pages and sign-in: authorization_pending, slow_down, the
// tokens (verified by jose), invalid_grant on reuse; access_denied for someone outside the
// client's gate and for a cancelled code; expired_token; another client's device code; wrong codes
// limited per address.
import http from 'node:http';
import t from 'tap';
import * as jose from 'jose';
import type { Browser, Page } from 'playwright-core';
import { freePort, launch, screenshots } from '../helpers/browser';
import { cli } from '../helpers/cli';
import { manualClock } from '../helpers/clock';
import { PASSWORD, setSignup, startTestServer, type TestServer } from '../helpers/server';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

async function provider(t: Parameters<typeof startTestServer>[0], flags: Record<string, unknown> = {}) {
  const clock = manualClock();
  const port = await freePort();
  const s = await startTestServer(t, { port, publicUrl: `http://localhost:${port}`, ...flags }, undefined, { clock });
  await s.signup('admin@example.com');
  await setSignup(s, await s.signin('admin@example.com'), 2097057);
  await s.signup('ada@example.com');
  return { s, clock };
}

const post = async (url: string, form: Record<string, string>) => {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });
  return { status: r.status, body: (await r.json()) as Record<string, string | number> };
};

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** Issue 46, item 13: links in discovery and device answers come from the public URL, never from the Host header. */
t.test('a forged Host header reaches no link: discovery and the device flow name the public URL', async (t) => {
  const { s } = await provider(t);
  const tv = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'TV', '--device', '--public'])).json;
  // Node's fetch cannot set Host: a raw request, as a client on the network can send it.
  const raw = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const u = new URL(s.url);
      const headers: Record<string, string> = { host: 'evil.example.net', 'x-forwarded-host': 'evil.example.net' };
      if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
      const req = http.request({ host: '127.0.0.1', port: u.port, method, path, headers }, (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const discovery = await raw('GET', '/.well-known/openid-configuration');
  t.equal(discovery.status, 200);
  for (const [k, v] of Object.entries(JSON.parse(discovery.text) as Record<string, unknown>)) {
    if (typeof v === 'string' && /^https?:/.test(v)) t.ok(v.startsWith(s.config.publicUrl), `${k}: ${v}`);
  }
  const device = await raw('POST', '/oidc/device/auth', `client_id=${tv.client_id}&scope=openid`);
  t.equal(device.status, 200, device.text);
  const answer = JSON.parse(device.text) as DeviceAuthorization;
  t.ok(answer.verification_uri.startsWith(`${s.config.publicUrl}/device`), answer.verification_uri);
  t.ok(answer.verification_uri_complete.startsWith(`${s.config.publicUrl}/device`));
  t.notMatch(device.text + discovery.text, /evil\.example\.net/);
});

async function startDevice(s: TestServer, clientId: string, scope = 'openid email profile offline_access'): Promise<DeviceAuthorization> {
  const r = await post(`${s.config.publicUrl}/oidc/device/auth`, { client_id: clientId, scope });
  if (r.status !== 200) throw new Error(JSON.stringify(r.body));
  return r.body as unknown as DeviceAuthorization;
}

const poll = (s: TestServer, clientId: string, deviceCode: string) =>
  post(`${s.config.publicUrl}/oidc/token`, { grant_type: DEVICE_GRANT, client_id: clientId, device_code: deviceCode });

/** Signs in on Gatehouse's page if the browser is asked to. */
async function signInIfAsked(page: Page, email: string) {
  await page.waitForLoadState();
  if (!new URL(page.url()).pathname.startsWith('/oidc/interaction/')) return;
  if (!(await page.getByLabel('Email', { exact: true }).count())) return;
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** A browser of its own (screenshots() takes each page at phone and desktop width). */
async function newPage(browser: Browser) {
  return (await browser.newContext()).newPage();
}

t.test('device flow: a code typed on /device, polled by hand, tokens verified by jose', async (t) => {
  const { s, clock } = await provider(t);
  const base = s.config.publicUrl;
  const tv = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Living-room TV', '--device', '--public'])).json;
  t.same(tv.grants, ['device_code']);
  const discovery = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.equal(discovery.device_authorization_endpoint, `${base}/oidc/device/auth`, 'discovery names the endpoint');
  t.ok((discovery.grant_types_supported as string[]).includes(DEVICE_GRANT));

  const d = await startDevice(s, tv.client_id);
  t.match(d.user_code, USER_CODE, 'XXXX-XXXX from the consonants');
  t.equal(d.verification_uri, `${base}/device`);
  t.equal(d.verification_uri_complete, `${base}/device?user_code=${d.user_code}`);
  t.equal(d.expires_in, 600, '10 minutes');
  t.equal(d.interval, 5, 'poll every 5 s');

  // Polling by hand: pending; too soon is slow_down (and the interval grows by 5 s); after the
  // grown interval, pending again.
  const first = await poll(s, tv.client_id, d.device_code);
  t.equal(first.status, 400);
  t.equal(first.body.error, 'authorization_pending');
  clock.advance(2000);
  const fast = await poll(s, tv.client_id, d.device_code);
  t.equal(fast.body.error, 'slow_down', 'polled after 2 s: slow_down');
  clock.advance(6000);
  t.equal((await poll(s, tv.client_id, d.device_code)).body.error, 'slow_down', 'after 6 s, but the interval is now 10 s: slow_down');
  clock.advance(16_000);
  t.equal((await poll(s, tv.client_id, d.device_code)).body.error, 'authorization_pending', 'after the grown interval: pending');
  const other = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Other box', '--device', '--public'])).json;
  const stolen = await poll(s, other.client_id, d.device_code);
  t.equal(stolen.body.error, 'invalid_grant', "another client polling this device's code: invalid_grant");

  // The person's part, in Chromium: the code typed in small letters without the dash.
  const browser = await launch(t);
  const page = await newPage(browser);
  await page.goto(d.verification_uri);
  await screenshots(page, 'device-enter');
  await page.getByLabel('Code').fill(d.user_code.replace('-', '').toLowerCase());
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { name: 'Sign in Living-room TV?' }).waitFor();
  t.equal(await page.locator('#user-code').textContent(), d.user_code, 'the code to compare with the device');
  await screenshots(page, 'device-confirm');
  await page.getByRole('button', { name: 'Continue' }).click();
  await signInIfAsked(page, 'ada@example.com');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Device connected' }).waitFor();
  t.match(await page.locator('main').textContent(), /Living-room TV is signed in/);
  await screenshots(page, 'device-done');

  clock.advance(16_000);
  const tokens = await poll(s, tv.client_id, d.device_code);
  t.equal(tokens.status, 200, JSON.stringify(tokens.body));
  t.type(tokens.body.access_token, 'string');
  t.type(tokens.body.refresh_token, 'string', 'offline_access gave a refresh token');
  const jwks = jose.createRemoteJWKSet(new URL(String(discovery.jwks_uri)));
  const ada = (await s.db('user_account').where({ email_key: 'ada@example.com' }).first('reference_id')).reference_id;
  const { payload } = await jose.jwtVerify(String(tokens.body.id_token), jwks, { issuer: base, audience: tv.client_id });
  t.equal(payload.sub, ada, 'the ID token names the person who confirmed');
  const me = await fetch(`${base}/oidc/me`, { headers: { authorization: `Bearer ${tokens.body.access_token}` } });
  t.equal(((await me.json()) as { email: string }).email, 'ada@example.com', 'userinfo answers the access token');

  clock.advance(16_000);
  const again = await poll(s, tv.client_id, d.device_code);
  t.equal(again.body.error, 'invalid_grant', 'a second exchange: invalid_grant');

  const audit = await cli(s.dataDir, ['--json', 'audit']);
  t.equal(audit.code, 0, audit.err);
  const authorized = (audit.json.events as Array<{ event: string; account: string; details: Record<string, unknown> }>).filter(
    (e) => e.event === 'device_authorized',
  );
  t.equal(authorized.length, 1, 'the confirmation is audited');
  t.equal(authorized[0].account, ada);
  t.equal(authorized[0].details.client_id, tv.client_id);
});

t.test('a confirmed device code polled by four requests at once is answered once, and the grant ends', async (t) => {
  const { s, clock } = await provider(t);
  const tv = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Kitchen TV', '--device', '--public'])).json;
  const d = await startDevice(s, tv.client_id);
  const browser = await launch(t);
  const page = await newPage(browser);
  await page.goto(d.verification_uri_complete);
  await page.getByRole('button', { name: 'Continue' }).click();
  await signInIfAsked(page, 'ada@example.com');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Device connected' }).waitFor();
  clock.advance(16_000);
  const answers = await Promise.all(Array.from({ length: 4 }, () => poll(s, tv.client_id, d.device_code)));
  const won = answers.filter((a) => a.status === 200);
  t.equal(won.length, 1, 'one token set');
  t.ok(
    answers.filter((a) => a.status !== 200).every((a) => a.body.error === 'invalid_grant'),
    'the others: invalid_grant',
  );
  const refreshed = await post(`${s.config.publicUrl}/oidc/token`, {
    grant_type: 'refresh_token',
    client_id: tv.client_id,
    refresh_token: String(won[0].body.refresh_token),
  });
  t.equal(refreshed.body.error, 'invalid_grant', 'the reuse ended the grant: its refresh token is refused');
});

t.test("device flow: someone outside the client's gate, a cancel, an expired code, wrong codes", async (t) => {
  const { s: server, clock } = await provider(t, { signinFailuresPerAddress: 3 });
  const s = Object.assign(server, { clock });
  await cli(s.dataDir, ['group', 'create', 'family']);
  const tv = (await cli(s.dataDir, ['--json', 'client', 'add', '--name', 'Family TV', '--device', '--public', '--allowed-group', 'family'])).json;
  const browser = await launch(t);

  // ada is not in the family: refused on the page, access_denied to the device.
  const d = await startDevice(s, tv.client_id);
  const page = await newPage(browser);
  await page.goto(d.verification_uri_complete);
  await page.getByRole('heading', { name: 'Sign in Family TV?' }).waitFor();
  await page.getByRole('button', { name: 'Continue' }).click();
  await signInIfAsked(page, 'ada@example.com');
  await page
    .getByText('This account may not sign in to that application')
    .waitFor({ timeout: 5000 })
    .catch(async (err) => {
      throw new Error(`${err.message}\nat ${page.url()}: ${(await page.locator('body').textContent())?.replace(/\s+/g, ' ').slice(0, 400)}`);
    });
  await screenshots(page, 'device-refused');
  const denied = await poll(s, tv.client_id, d.device_code);
  t.equal(denied.body.error, 'access_denied', 'outside the gate: access_denied');

  // Cancelled by the person.
  const d2 = await startDevice(s, tv.client_id);
  await page.goto(d2.verification_uri_complete);
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByText('The sign-in was cancelled').waitFor();
  t.equal((await poll(s, tv.client_id, d2.device_code)).body.error, 'access_denied', 'cancelled: access_denied');
  // Issue 46, item 14: polled again after the cancel, the device is still told, never a 500.
  for (let i = 0; i < 3; i++) {
    s.clock?.advance?.(6_000);
    const again = await poll(s, tv.client_id, d2.device_code);
    t.ok(again.status >= 400 && again.status < 500, `poll ${i + 2} after the cancel: ${again.status} ${again.body.error}`);
    t.match(again.body.error, /^(access_denied|invalid_grant|expired_token)$/);
  }

  // In the family, ada gets in (her session from before is used: no second sign-in).
  await cli(s.dataDir, ['group', 'add', 'family', 'ada@example.com']);
  const d3 = await startDevice(s, tv.client_id, 'openid');
  await page.goto(d3.verification_uri_complete);
  await page.getByRole('button', { name: 'Continue' }).click();
  await signInIfAsked(page, 'ada@example.com');
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Device connected' }).waitFor();
  t.equal((await poll(s, tv.client_id, d3.device_code)).status, 200, 'a member gets the tokens');

  // An expired code: the device is told expired_token, the person that it expired. (The provider
  // reads expiry from the payload by its own clock: the stored payload is aged as 10 minutes would.)
  const d4 = await startDevice(s, tv.client_id);
  const row = await s
    .db('oidc_payload')
    .where({ model: 'DeviceCode', user_code: d4.user_code.replace('-', '') })
    .first();
  t.ok(row, 'the user code is stored normalized');
  await s
    .db('oidc_payload')
    .where({ model: 'DeviceCode', id: row.id })
    .update({ payload: JSON.stringify({ ...JSON.parse(row.payload), exp: Math.floor(Date.now() / 1000) - 1 }) });
  t.equal((await poll(s, tv.client_id, d4.device_code)).body.error, 'expired_token');
  await page.goto(d4.verification_uri_complete);
  await page.getByText('That code has expired').waitFor();

  // Wrong codes: each says so; past the address's limit (3 here) the page waits (429).
  await page.goto(`${s.config.publicUrl}/device`);
  for (let i = 0; i < 3; i++) {
    await page.getByLabel('Code').fill('BBBB-BBBB');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('That code is not right').waitFor();
  }
  await screenshots(page, 'device-wrong-code');
  await page.getByLabel('Code').fill('BBBB-BBBB');
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/device') && r.request().method() === 'POST'),
    page.getByRole('button', { name: 'Continue' }).click(),
  ]);
  t.equal(answer.status(), 429, 'past the limit: 429');
  t.match(await page.locator('body').textContent(), /Too many tries/);
  const d5 = await startDevice(s, tv.client_id);
  await page.goto(d5.verification_uri_complete);
  t.match(await page.locator('body').textContent(), /Too many tries/, 'even the right code waits now');
});

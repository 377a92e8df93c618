// "Used once" across two packaged instances on one PostgreSQL database: one code and one refresh
// token sent to both at once are answered once; the others are invalid_grant and the grant ends.
// The sign-in page's code step, finished on both at once, signs in once.
import t from 'tap';
import { twoInstances } from '../helpers/pg';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

const PW = 'used once instances password';

t.test('a code and a refresh token sent to two instances at once are answered once', async (t) => {
  const two = await twoInstances(t, PW);
  if (!two) return;
  const { a, b, shell, spread } = two;
  const app = JSON.parse((await shell(['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', REDIRECT, '--first-party'])).stdout);

  for (let trial = 0; trial < 4; trial++) {
    const { code, verifier } = await authorizationCode(a.url, app.client_id, 'admin@example.com', PW);
    const codes = await spread((base) => token(base, app, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }));
    t.equal(codes.filter((r) => r.status === 200).length, 1, `trial ${trial}: the code answered once`);
    t.ok(
      codes.filter((r) => r.status !== 200).every((r) => r.json.error === 'invalid_grant'),
      'the others invalid_grant',
    );

    const fresh = await authorizationCode(b.url, app.client_id, 'admin@example.com', PW);
    const first = await token(a.url, app, { grant_type: 'authorization_code', code: fresh.code, redirect_uri: REDIRECT, code_verifier: fresh.verifier });
    t.equal(first.status, 200);
    const rotations = await spread((base) => token(base, app, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token }));
    const won = rotations.filter((r) => r.status === 200);
    t.equal(won.length, 1, `trial ${trial}: the refresh token rotated once`);
    const after = await token(b.url, app, { grant_type: 'refresh_token', refresh_token: won[0].json.refresh_token });
    t.equal(after.json.error, 'invalid_grant', 'the reuse ended the chain');
  }
});

t.test("the sign-in page's code step, finished on two instances at once, signs in once", async (t) => {
  const two = await twoInstances(t, PW);
  if (!two) return;
  const { a, b } = two;
  const { codes } = await two.totpOn();

  for (let trial = 0; trial < 3; trial++) {
    // One browser (one cookie jar) whose requests land on either instance.
    const jar = new Map<string, string>();
    const go = async (base: string, path: string, form?: Record<string, string>) => {
      const res = await fetch(`${base}${path}`, {
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
    await go(a.url, '/signin');
    const asked = await go(a.url, '/signin', { email: 'admin@example.com', password: PW });
    const step = /name="step" value="([^"]+)"/.exec(asked.text)?.[1];
    t.ok(step, `trial ${trial}: the code step, held on A`);
    // Two recovery codes, each good on its own, one to each instance: only the step decides.
    const [x, y] = codes.splice(0, 2);
    const answers = await Promise.all([go(a.url, '/signin/code', { step: step!, otp: x! }), go(b.url, '/signin/code', { step: step!, otp: y! })]);
    t.same(answers.map((r) => r.status).sort(), [303, 400], `trial ${trial}: one sign-in, one refusal`);
  }
});

// "Used once" across two packaged instances on one PostgreSQL database: one code and one refresh
// token sent to both at once are answered once; the others are invalid_grant and the grant ends.
import t from 'tap';
import { onPostgres } from '../helpers/pg';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

const PW = 'used once instances password';

t.test('a code and a refresh token sent to two instances at once are answered once', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const { serve, shell } = pg;
  const flags = ['--bcrypt-cost', '4', '--public-url', 'https://id.example.test', '--no-rate-limits'];
  const [a, b] = await Promise.all([serve(flags), serve(flags)]);
  t.equal((await shell(['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { PW })).code, 0);
  const app = JSON.parse((await shell(['--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', REDIRECT, '--first-party'])).stdout);
  const spread = <T>(fn: (base: string) => Promise<T>) => Promise.all([a.url, b.url, a.url, b.url].map(fn));

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

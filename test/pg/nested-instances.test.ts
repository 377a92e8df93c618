// Nested groups on two packaged instances sharing one PostgreSQL database: a group put inside
// another from the shell opens an OpenID Connect client's gate and a forward-auth app on either
// instance at the next request, and shows in the `groups` claim; taking it out closes them again.
// Two requests at once, one on each instance, that would together make a cycle: one wins.
import t from 'tap';
import { onPostgres } from '../helpers/pg';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

const PW = 'nested instances password 1';

t.test('a nesting change applies on both instances at the next request', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const flags = ['--bcrypt-cost', '4', '--public-url', 'https://id.example.test', '--no-rate-limits', '--trust-proxy', '127.0.0.1'];
  const [a, b] = await Promise.all([pg.serve(flags), pg.serve(flags)]);
  const shell = async (...args: string[]) => {
    const r = await pg.shell(args, { PW });
    t.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  await shell('bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW');
  await shell('user', 'create', '--email', 'alice@example.com', '--password-env', 'PW');
  for (const g of ['staff', 'engineering', 'platform']) await shell('group', 'create', g);
  await shell('group', 'add', 'platform', 'alice@example.com');
  await shell('group', 'add-group', 'engineering', 'platform');
  const app = JSON.parse(
    (await shell('--json', 'client', 'add', '--name', 'Wiki', '--redirect-uri', REDIRECT, '--first-party', '--allowed-group', 'staff')).stdout,
  );
  await shell('app', 'add', '--host', 'app.example.test', '--allow-group', 'staff');

  const refused = await authorizationCode(a.url, app.client_id, 'alice@example.com', PW, 'openid groups offline_access');
  t.equal(refused.error, 'access_denied', 'alice is not in staff yet: the gate is shut on A');

  await shell('group', 'add-group', 'staff', 'engineering');
  const opened = await authorizationCode(b.url, app.client_id, 'alice@example.com', PW, 'openid groups offline_access');
  t.ok(opened.code, 'platform ⊂ engineering ⊂ staff: B lets alice in at the next request');
  const tokens = await token(a.url, app, { grant_type: 'authorization_code', code: opened.code, redirect_uri: REDIRECT, code_verifier: opened.verifier });
  t.equal(tokens.status, 200);
  const info = await fetch(`${b.url}/oidc/me`, { headers: { authorization: `Bearer ${tokens.json.access_token}` } });
  t.same(
    ((await info.json()) as { groups?: string[] }).groups,
    ['engineering', 'platform', 'staff', 'users'],
    'the groups claim names every group, directly or not',
  );

  // Forward authentication, with a bearer token from the action API, on either instance.
  const signin = await fetch(`${b.url}/action/user_account/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'alice@example.com', password: PW } }),
  });
  const bearer = String(
    ((await signin.json()) as Array<{ Attributes: { key?: string; value?: string } }>).find((i) => i.Attributes.key === 'token')?.Attributes.value,
  );
  const ask = async (url: string) =>
    (
      await fetch(`${url}/auth/request`, {
        headers: { authorization: `Bearer ${bearer}`, 'x-original-url': 'https://app.example.test/', 'x-original-method': 'GET' },
        redirect: 'manual',
      })
    ).status;
  t.equal(await ask(a.url), 200, 'forward auth lets her through on A');

  await shell('group', 'remove-group', 'engineering', 'platform');
  t.equal(await ask(b.url), 403, 'taken out: B refuses at the next request');
  const refresh = await token(b.url, app, { grant_type: 'refresh_token', refresh_token: tokens.json.refresh_token });
  t.equal(refresh.json.error, 'invalid_grant', 'and the refresh on B finds her outside the gate');
});

t.test('two requests at once that would make a cycle, one on each instance: one wins', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const flags = ['--bcrypt-cost', '4', '--public-url', 'https://id.example.test', '--no-rate-limits'];
  const [a, b] = await Promise.all([pg.serve(flags), pg.serve(flags)]);
  t.equal((await pg.shell(['bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW'], { PW })).code, 0);
  const signin = await fetch(`${a.url}/action/user_account/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'admin@example.com', password: PW } }),
  });
  const admin = String(
    ((await signin.json()) as Array<{ Attributes: { key?: string; value?: string } }>).find((i) => i.Attributes.key === 'token')?.Attributes.value,
  );
  const group = async (name: string) => JSON.parse((await pg.shell(['--json', 'group', 'create', name])).stdout).reference_id as string;
  const nest = (base: string, parent: string, child: string) =>
    fetch(`${base}/api/usergroup/${parent}/relationships/groups`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/vnd.api+json' },
      body: JSON.stringify({ data: [{ type: 'usergroup', id: child }] }),
    }).then((r) => r.status);

  for (let round = 0; round < 6; round++) {
    const [x, y, z] = [await group(`x${round}`), await group(`y${round}`), await group(`z${round}`)];
    // Round by round: a two-group cycle, then a three-group one closed from both ends at once.
    if (round % 2 === 0) {
      const statuses = await Promise.all([nest(a.url, x, y), nest(b.url, y, x)]);
      t.same(statuses.sort(), [204, 409], `round ${round}: x into y and y into x at once: one nests, one is a cycle`);
    } else {
      t.equal(await nest(a.url, x, y), 204);
      const statuses = await Promise.all([nest(a.url, y, z), nest(b.url, z, x)]);
      t.same(statuses.sort(), [204, 409], `round ${round}: closing x ⊃ y ⊃ z ⊃ x from both ends: one is refused`);
    }
  }
  const shown = JSON.parse((await pg.shell(['--json', 'group', 'list'])).stdout).groups as Array<{ name: string }>;
  t.equal(shown.filter((g) => /^[xyz]\d$/.test(g.name)).length, 18, 'every group is still there');
});

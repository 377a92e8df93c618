// Forward authentication on two packaged instances sharing one PostgreSQL database: a session
// signed in on one is answered by the other, and an app added, a session revoked or an app
// removed from the shell applies to both from their next request.
import t from 'tap';
import { onPostgres } from '../helpers/pg';

const PW = 'forward instance password 1';

t.test('two instances answer forward authentication for the same session', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  const flags = ['--bcrypt-cost', '4', '--public-url', 'https://auth.example.test', '--cookie-domain', 'example.test', '--trust-proxy', '127.0.0.1'];
  const [a, b] = await Promise.all([pg.serve(flags), pg.serve(flags)]);
  const shell = (...args: string[]) => pg.shell(args, { PW });
  t.equal((await shell('bootstrap-admin', '--email', 'admin@example.com', '--password-env', 'PW')).code, 0);

  const signin = await fetch(`${a.url}/action/user_account/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'admin@example.com', password: PW } }),
  });
  const token = String(
    ((await signin.json()) as Array<{ Attributes: { key?: string; value?: string } }>).find((i) => i.Attributes.key === 'token')?.Attributes.value,
  );
  const ask = async (url: string) =>
    (
      await fetch(`${url}/auth/request`, {
        headers: { authorization: `Bearer ${token}`, 'x-original-url': 'https://app.example.test/', 'x-original-method': 'GET' },
        redirect: 'manual',
      })
    ).status;

  t.equal(await ask(b.url), 403, 'no app yet: refused on B');
  t.equal((await shell('app', 'add', '--host', 'app.example.test', '--allow-group', 'administrators')).code, 0);
  t.equal(await ask(a.url), 200, 'added from the shell: A lets the session through');
  t.equal(await ask(b.url), 200, "and B answers for A's session");
  t.equal((await shell('user', 'revoke-sessions', 'admin@example.com')).code, 0);
  t.equal(await ask(a.url), 401, 'revoked: A refuses at once');
  t.equal(await ask(b.url), 401, 'and B');
});

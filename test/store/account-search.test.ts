// The console's account search (core.accounts.search): a literal, case-blind substring of the
// email or the name, newest first, paged by keyset, read through the trigram indexes where the
// term has three characters or more. Its answers are those of a plain scan, on SQLite and
// PostgreSQL alike.
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD, withAdmin } from '../helpers/server';

t.test('account search: substring of email or name, any case, literal, paged', async (t) => {
  const s = await withAdmin(t);
  const people = [
    ['anna.berg@example.com', 'Anna Berg'],
    ['bob@example.com', 'Hannah Ek'],
    ['cy@example.com', 'Cy Ramos'],
    ['dee_100%@example.com', 'Dee'],
    ['deex100x@example.com', 'Deex'],
    ['eve@annex.example', 'Eve'],
  ];
  for (const [email, name] of people) {
    const r = await cli(s.dataDir, ['user', 'create', '--email', email, '--name', name, '--password-env', 'PW'], { env: { PW: PASSWORD } });
    t.equal(r.code, 0, `${email}: ${r.err}`);
  }
  const shell = s.core.shell;
  const emails = async (q: string, o: { after?: string; limit?: number } = {}) =>
    (await s.core.accounts.search(shell, { q, ...o })).accounts.map((a) => a.email);
  // A plain scan gives the expected answer: every account whose email or name holds q, newest first.
  const scan = async (q: string) =>
    (await s.db('user_account').orderBy('id', 'desc').select('email', 'name'))
      .filter((a: { email: string; name: string }) => a.email.toLowerCase().includes(q.toLowerCase()) || a.name.toLowerCase().includes(q.toLowerCase()))
      .map((a: { email: string }) => a.email);

  for (const q of ['ann', 'ANN', 'nnah', 'an', 'example', 'x', '100%', '_100', '%', 'nobody at all', 'a.b']) {
    t.same(await emails(q), await scan(q), `q=${q}`);
  }
  t.same(await emails('ann'), ['eve@annex.example', 'bob@example.com', 'anna.berg@example.com'], 'email or name, newest first');
  t.same(await emails('_100'), ['dee_100%@example.com'], '_ is not a wildcard');
  t.same(await emails('100%'), ['dee_100%@example.com'], '% is not a wildcard');

  // Paged by keyset, with the search kept.
  const first = await s.core.accounts.search(shell, { q: 'example', limit: 2 });
  t.equal(first.accounts.length, 2);
  t.ok(first.next);
  const second = await s.core.accounts.search(shell, { q: 'example', limit: 2, after: first.next! });
  t.same(
    [...first.accounts, ...second.accounts].map((a) => a.email),
    (await scan('example')).slice(0, 4),
    'the second page follows the first',
  );
});

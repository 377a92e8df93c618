// The token endpoint answers only with what is stored: a request's writes (the code consumed, the
// new tokens) go to the store together without waiting for one another (oidc/support.ts), and
// the answer waits for all of them. When one fails, the answer is server_error and carries no
// token: a relying party never holds a token the store does not know.
import t from 'tap';
import { inspectionDb } from '../helpers/db';
import { PASSWORD, withAdmin } from '../helpers/server';
import { addClient } from '../helpers/oidc';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

t.test('a token write that fails: server_error, no token, and the next exchange works', async (t) => {
  const s = await withAdmin(t);
  const db = inspectionDb(t, s.core.config);
  const client = (await addClient(s, '--first-party')) as { client_id: string; client_secret: string };
  const exchange = async () => {
    const { code, verifier } = await authorizationCode(s.url, client.client_id, 'admin@example.com', PASSWORD);
    return token(s.url, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
  };

  // The store refuses access tokens (as a full disk or a broken constraint would).
  if (s.core.config.db) {
    await db.raw(`CREATE FUNCTION gh_test_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$ LANGUAGE plpgsql`);
    await db.raw(`CREATE TRIGGER gh_test_refuse BEFORE INSERT ON oidc_payload FOR EACH ROW WHEN (NEW.model = 'AccessToken') EXECUTE FUNCTION gh_test_refuse()`);
  } else {
    await db.raw(
      `CREATE TRIGGER gh_test_refuse BEFORE INSERT ON oidc_payload WHEN NEW.model = 'AccessToken' BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
    );
  }
  const refused = await exchange();
  t.equal(refused.status, 500);
  t.equal(refused.json.error, 'server_error');
  t.notOk(refused.json.access_token, 'no access token');
  t.notOk(refused.json.refresh_token, 'no refresh token');
  t.equal(Number((await db('oidc_payload').where({ model: 'AccessToken' }).count({ n: '*' }).first())?.n), 0, 'nothing half-answered');

  await db.raw('DROP TRIGGER gh_test_refuse' + (s.core.config.db ? ' ON oidc_payload' : ''));
  const works = await exchange();
  t.equal(works.status, 200, 'the next exchange works');
  t.ok(works.json.access_token);
  t.ok(works.json.refresh_token);
  const refreshed = await token(s.url, client, { grant_type: 'refresh_token', refresh_token: works.json.refresh_token });
  t.equal(refreshed.status, 200, 'and its refresh token rotates');
});

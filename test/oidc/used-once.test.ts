// "Used once" under requests sent at once: one authorization code, one refresh token or one
// device code presented by four requests together is answered once. The others are told
// invalid_grant, and the reuse ends the whole grant (RFC 6749 §4.1.2, refresh-token reuse
// detection): every token it issued, the one answered too, stops working.
import t from 'tap';
import { PASSWORD, withAdmin } from '../helpers/server';
import { addClient } from '../helpers/oidc';
import { authorizationCode, REDIRECT, token } from '../helpers/oidc-http';

const AT_ONCE = 4;

t.test('one code sent by four requests at once is answered once, and the grant ends', async (t) => {
  const s = await withAdmin(t);
  const client = (await addClient(s, '--first-party')) as { client_id: string; client_secret: string };
  for (let trial = 0; trial < 4; trial++) {
    const { code, verifier } = await authorizationCode(s.url, client.client_id, 'admin@example.com', PASSWORD);
    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, () => token(s.url, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier })),
    );
    const won = answers.filter((a) => a.status === 200);
    t.equal(won.length, 1, `trial ${trial}: one answer with tokens`);
    for (const lost of answers.filter((a) => a.status !== 200)) {
      t.equal(lost.status, 400);
      t.equal(lost.json.error, 'invalid_grant');
      t.notOk(lost.json.access_token);
    }
    // The reuse ended the grant: the winner's refresh token is refused too.
    const after = await token(s.url, client, { grant_type: 'refresh_token', refresh_token: won[0].json.refresh_token });
    t.equal(after.status, 400, `trial ${trial}: the grant was revoked`);
    t.equal(after.json.error, 'invalid_grant');
  }
});

t.test('one refresh token sent by four requests at once rotates once, and the chain ends', async (t) => {
  const s = await withAdmin(t);
  const client = (await addClient(s, '--first-party')) as { client_id: string; client_secret: string };
  for (let trial = 0; trial < 4; trial++) {
    const { code, verifier } = await authorizationCode(s.url, client.client_id, 'admin@example.com', PASSWORD);
    const first = await token(s.url, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
    t.equal(first.status, 200);
    const answers = await Promise.all(
      Array.from({ length: AT_ONCE }, () => token(s.url, client, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token })),
    );
    const won = answers.filter((a) => a.status === 200);
    t.equal(won.length, 1, `trial ${trial}: one rotation`);
    for (const lost of answers.filter((a) => a.status !== 200)) t.equal(lost.json.error, 'invalid_grant');
    const after = await token(s.url, client, { grant_type: 'refresh_token', refresh_token: won[0].json.refresh_token });
    t.equal(after.json.error, 'invalid_grant', `trial ${trial}: the rotated token died with the grant`);
  }
});

t.test('a refresh token used once then again (one after the other) is still reuse', async (t) => {
  const s = await withAdmin(t);
  const client = (await addClient(s, '--first-party')) as { client_id: string; client_secret: string };
  const { code, verifier } = await authorizationCode(s.url, client.client_id, 'admin@example.com', PASSWORD);
  const first = await token(s.url, client, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
  const second = await token(s.url, client, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token });
  t.equal(second.status, 200);
  const again = await token(s.url, client, { grant_type: 'refresh_token', refresh_token: first.json.refresh_token });
  t.equal(again.json.error, 'invalid_grant');
  const chain = await token(s.url, client, { grant_type: 'refresh_token', refresh_token: second.json.refresh_token });
  t.equal(chain.json.error, 'invalid_grant', 'the chain ended');
});

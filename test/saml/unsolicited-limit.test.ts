// An IdP-initiated sign-in (POST /saml/start/<sp>, the form on Gatehouse's own pages) keeps a
// sign-in in progress like an SP's AuthnRequest does, so it counts toward
// --saml-requests-per-address with them: a guest cannot fill the store with pending sign-ins once
// /saml/sso answers 429.
import { deflateRawSync } from 'node:zlib';
import t from 'tap';
import { browser } from '../helpers/oidc-http';
import { addSp, nodeSamlSp, SP_ENTITY } from '../helpers/saml';
import { countRows, withAdmin } from '../helpers/server';

const request = () =>
  `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${Math.random().toString(16).slice(2)}" Version="2.0" IssueInstant="${new Date().toISOString()}"><saml:Issuer>${SP_ENTITY}</saml:Issuer></samlp:AuthnRequest>`;

t.test('IdP-initiated sign-ins count toward --saml-requests-per-address with the SP requests', async (t) => {
  const s = await withAdmin(t, { samlRequestsPerAddress: 3 });
  const sp = await nodeSamlSp(s);
  const { id } = await addSp(t, s, sp.metadata, '--name', 'Wiki');
  // A guest's browser: the sign-in page gives it the form token the start form needs.
  const guest = browser(s.url);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await (await guest('/signin')).text())![1]!;
  const startOne = () =>
    guest(`/saml/start/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf }).toString(),
    });

  const first = await startOne();
  t.equal(first.status, 303, 'a sign-in started from Gatehouse is kept');
  t.match(first.headers.get('location'), /^\/saml\/continue\//);
  const sso = await fetch(`${s.url}/saml/sso?SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(request())).toString('base64'))}`, {
    redirect: 'manual',
  });
  t.equal(sso.status, 303, 'an SP request from the same address is the second');
  t.equal((await startOne()).status, 303, 'the third');
  const flood = await startOne();
  t.equal(flood.status, 429, 'the fourth, started from Gatehouse, waits');
  t.match(await flood.text(), /Too many tries: try again in \d+ (seconds?|minutes?)/);
  t.equal(await countRows(s, 'saml_request'), 3, 'no row for a refused start');
  const after = await fetch(`${s.url}/saml/sso?SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(request())).toString('base64'))}`, {
    redirect: 'manual',
  });
  t.equal(after.status, 429, '/saml/sso waits too');
});

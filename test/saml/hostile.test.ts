// Hostile AuthnRequests: each is refused with a page that says why, and nothing goes to the SP.
import { createSign } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import t from 'tap';
import { ACS, addSp, browse, nodeSamlSp, sessionCookie, SP_ENTITY, spKeyPair } from '../helpers/saml';
import { setSignup, withAdmin } from '../helpers/server';

const now = () => new Date().toISOString();
const request = (o: { id?: string; issuer?: string; acs?: string; extra?: string; prefix?: string } = {}) =>
  `${o.prefix ?? ''}<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.id ?? `_${Math.random().toString(16).slice(2)}`}" Version="2.0" IssueInstant="${now()}"${
    o.acs ? ` AssertionConsumerServiceURL="${o.acs}"` : ''
  }><saml:Issuer>${o.issuer ?? SP_ENTITY}</saml:Issuer>${o.extra ?? ''}</samlp:AuthnRequest>`;
const redirect = (base: string, xml: string, relay?: string) =>
  `${base}/saml/sso?SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}${relay === undefined ? '' : `&RelayState=${encodeURIComponent(relay)}`}`;

t.test('hostile requests are refused with a page, and no Response is made', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  const sp = await nodeSamlSp(s);
  await addSp(t, s, sp.metadata, '--name', 'Wiki');
  const cookie = await sessionCookie(s, 'ada@example.com');
  const base = s.config.publicUrl;
  const refused = async (name: string, start: Parameters<typeof browse>[0], why: RegExp, status = 400) => {
    const r = await browse(start, cookie);
    t.equal(r.status, status, `${name}: ${status}`);
    t.equal(r.action, null, `${name}: nothing is posted to the SP`);
    t.match(r.html, why, `${name}: the page says why`);
  };

  // The control: a plain request from the SP signs in.
  const control = await browse(redirect(base, request()), cookie);
  t.equal(control.action, ACS, 'a well-formed request is answered', {
    html: control.html.slice(control.html.indexOf('<main'), control.html.indexOf('<main') + 400),
  });

  await refused(
    'a DOCTYPE with an entity',
    redirect(base, request({ prefix: '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>', extra: '<x>&x;</x>' })),
    /DOCTYPE/,
  );
  await refused('entity expansion', redirect(base, request({ prefix: '<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>' })), /DOCTYPE/);
  const big = 'A'.repeat(10 * 1024 * 1024);
  await refused('a 10 MB posted request', { url: `${base}/saml/sso`, form: { SAMLRequest: big } }, /too large/, 413);
  await refused('a 10 MB redirect request (a DEFLATE bomb)', redirect(base, request({ extra: `<x>${'a'.repeat(10 * 1024 * 1024)}</x>` })), /too large/);
  await refused(
    'an unknown SP',
    redirect(base, request({ issuer: 'https://evil.example.com' })),
    /No service provider https:\/\/evil\.example\.com is registered/,
    404,
  );
  await refused('an ACS URL that is not the SP’s', redirect(base, request({ acs: 'https://evil.example.com/acs' })), /not one registered for Wiki/);
  await refused('RelayState over 80 bytes', redirect(base, request(), 'r'.repeat(81)), /RelayState is longer than 80 bytes/);
  const id = '_replayed1';
  t.equal((await browse(redirect(base, request({ id })), cookie)).action, ACS, 'the first use of an ID is answered');
  await refused('a replayed request ID', redirect(base, request({ id })), /used already/);
  await refused('no message at all', `${base}/saml/sso`, /takes a SAML message from an app/);
  await refused('not SAML at all', `${base}/saml/sso?SAMLRequest=bm90IHNhbWw%3D`, /not DEFLATE|not well-formed/);
});

t.test('signed requests: a wrong signature and signature wrapping are refused', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  const keys = spKeyPair(t);
  const sp = await nodeSamlSp(s, { signing: keys });
  await addSp(t, s, sp.metadata, '--name', 'Wiki');
  const cookie = await sessionCookie(s, 'ada@example.com');
  const base = s.config.publicUrl;

  // HTTP-Redirect: the signature covers the query; another key's signature does not verify.
  const other = spKeyPair(t);
  const sign = (xml: string, key: string) => {
    const q = `SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}&SigAlg=${encodeURIComponent('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')}`;
    return `${base}/saml/sso?${q}&Signature=${encodeURIComponent(createSign('RSA-SHA256').update(q).sign(key, 'base64'))}`;
  };
  t.equal((await browse(sign(request(), keys.key), cookie)).action, ACS, 'signed with the registered key: answered');
  const wrong = await browse(sign(request(), other.key), cookie);
  t.equal(wrong.action, null);
  t.match(wrong.html, /signature does not verify/);
  const unsigned = await browse(redirect(base, request()), cookie);
  t.match(unsigned.html, /signs its requests .* this one is not signed/, 'an unsigned request from an SP that signs is refused');

  // HTTP-POST: node-saml's signed request, then the same signature wrapped inside a forged request.
  const form = await sp.saml.getAuthorizeFormAsync('', undefined, {});
  const value = /name="SAMLRequest" value="([^"]+)"/.exec(form)![1]!;
  t.ok((await browse({ url: `${base}/saml/sso`, form: { SAMLRequest: value } }, cookie)).action, 'the genuine signed POST request is answered');
  const { inflateRawSync } = await import('node:zlib');
  const signed = inflateRawSync(Buffer.from(value, 'base64')).toString('utf8');
  const inner = signed.replace(/^<\?xml[^>]*\?>/, '');
  const wrapped = request({ id: '_forged', acs: 'https://evil.example.com/acs', extra: `<samlp:Extensions>${inner}</samlp:Extensions>` });
  const w = await browse({ url: `${base}/saml/sso`, form: { SAMLRequest: Buffer.from(wrapped).toString('base64') } }, cookie);
  t.equal(w.action, null, 'signature wrapping: nothing is posted');
  t.match(w.html, /signature is not on the message itself|signature wrapping/);
  // A signature moved onto a forged root with the original's ID: the digest no longer matches.
  const forged = signed.replace(/AssertionConsumerServiceURL="[^"]*"/, `AssertionConsumerServiceURL="${ACS}" ForceAuthn="false"`);
  const f = await browse({ url: `${base}/saml/sso`, form: { SAMLRequest: Buffer.from(forged).toString('base64') } }, cookie);
  t.equal(f.action, null, 'an altered signed request is refused');
  t.match(f.html, /signature does not verify/);
});

t.test('SAML requests from one address are limited (each keeps a sign-in in progress)', async (t) => {
  const s = await withAdmin(t, { samlRequestsPerAddress: 3 });
  const sp = await nodeSamlSp(s);
  await addSp(t, s, sp.metadata, '--name', 'Wiki');
  const base = s.config.publicUrl;
  for (let i = 0; i < 3; i++) t.equal((await fetch(redirect(base, request()), { redirect: 'manual' })).status, 303, `request ${i + 1} is kept`);
  const flood = await browse(redirect(base, request()));
  t.equal(flood.status, 429, 'the fourth waits');
  t.match(flood.html, /Too many tries: try again in \d+ (seconds?|minutes?)/);
  t.equal(
    await s
      .db('saml_request')
      .count({ n: '*' })
      .first()
      .then((r) => Number(r?.n)),
    3,
    'no row for a refused request',
  );
});

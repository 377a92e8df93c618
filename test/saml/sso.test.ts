// SP-initiated SAML sign-in checked by a service provider nobody here wrote (@node-saml/node-saml):
// the Response's and the assertion's signatures against the metadata's certificate, the audience,
// InResponseTo, the recipient and the lifetimes; before and after a certificate rotation. The
// group gate and a disabled account; xmlsec1 verifies a captured Response on its own.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, tempDir, withAdmin } from '../helpers/server';
import { ACS, addSp, browse, idpCerts, nodeSamlSp, sessionCookie, SP_ENTITY, spKeyPair } from '../helpers/saml';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  for (const email of ['ada@example.com', 'bob@example.com']) {
    const r = await s.signup(email);
    if (r.status !== 200) throw new Error(r.text);
  }
  await cli(s.dataDir, ['group', 'create', 'staff']);
  await cli(s.dataDir, ['group', 'add', 'staff', 'ada@example.com']);
  return s;
}

t.test('node-saml signs in through the redirect binding: signatures, audience, InResponseTo, attributes', async (t) => {
  const s = await setUp(t);
  const sp = await nodeSamlSp(s);
  const registered = await addSp(t, s, sp.metadata, '--name', 'Wiki', '--allowed-group', 'staff');
  t.equal(registered.entity_id, SP_ENTITY);
  const cookie = await sessionCookie(s, 'ada@example.com');

  const url = await sp.saml.getAuthorizeUrlAsync('relay-1', undefined, {});
  const posted = await browse(url, cookie);
  t.equal(posted.action, ACS, 'the form goes to the registered ACS URL');
  t.equal(posted.fields.RelayState, 'relay-1', 'RelayState comes back as given');
  const { profile } = await sp.saml.validatePostResponseAsync({ SAMLResponse: posted.fields.SAMLResponse! });
  t.ok(profile, 'node-saml accepts the Response');
  t.equal(profile!.nameID, 'ada@example.com', 'NameID: the email (the default format)');
  t.equal(profile!.issuer, `${s.config.publicUrl}/saml/metadata`);
  t.equal(profile!.email, 'ada@example.com', 'the email attribute (FriendlyName)');
  t.equal(profile!['urn:oid:0.9.2342.19200300.100.1.1'], 'ada', 'uid');
  t.same([profile!['urn:oid:1.3.6.1.4.1.5923.1.5.1.1']].flat().sort(), ['staff', 'users'], 'isMemberOf: managed groups');
  const xml = Buffer.from(posted.fields.SAMLResponse!, 'base64').toString('utf8');
  t.match(xml, /AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</, 'a password sign-in');
  t.match(xml, /<saml:Audience>https:\/\/app\.example\.test\/saml<\/saml:Audience>/);
  t.match(xml, /Recipient="http:\/\/localhost:4999\/saml\/acs"/);

  // The same Response again: node-saml's InResponseTo cache refuses it (the request was answered).
  await t.rejects(sp.saml.validatePostResponseAsync({ SAMLResponse: posted.fields.SAMLResponse! }), 'a Response is accepted once');

  // xmlsec1 checks the Response's own signature with the metadata's certificate, without JavaScript.
  const dir = tempDir(t, 'gatehouse-xmlsec-');
  const cert = (await idpCerts(s))[0]!;
  fs.writeFileSync(path.join(dir, 'idp.pem'), `-----BEGIN CERTIFICATE-----\n${cert.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`);
  fs.writeFileSync(path.join(dir, 'response.xml'), xml);
  const verified = execFileSync(
    'xmlsec1',
    [
      '--verify',
      '--pubkey-cert-pem',
      path.join(dir, 'idp.pem'),
      '--id-attr:ID',
      'urn:oasis:names:tc:SAML:2.0:protocol:Response',
      '--id-attr:ID',
      'urn:oasis:names:tc:SAML:2.0:assertion:Assertion',
      path.join(dir, 'response.xml'),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.pass(`xmlsec1 verified the Response ${verified.trim()}`);
});

t.test('the gate and a disabled account: a page says why, the SP gets nothing', async (t) => {
  const s = await setUp(t);
  const sp = await nodeSamlSp(s);
  await addSp(t, s, sp.metadata, '--name', 'Wiki', '--allowed-group', 'staff');
  const bob = await sessionCookie(s, 'bob@example.com');
  const outside = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}), bob);
  t.equal(outside.status, 403);
  t.equal(outside.action, null, 'no form to the SP');
  t.match(outside.html, /may not sign in to Wiki/);

  const ada = await sessionCookie(s, 'ada@example.com');
  await cli(s.dataDir, ['user', 'disable', 'ada@example.com']);
  const disabled = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}), ada);
  t.equal(disabled.action, null, 'a disabled account gets no Response');
  t.match(disabled.html, /Sign in/, 'its session is gone: the sign-in page');

  // Counted by outcome, and audited with the SP.
  const metrics = (await s.call('GET', '/metrics', { token: s.adminToken })).text;
  t.match(metrics, /gatehouse_saml_signins_total\{outcome="refused"\} 1/, 'the refusal at the gate is counted (the disabled account had no session left)');
  const audit = (await cli(s.dataDir, ['--json', 'audit', '--account', 'bob@example.com'])).json;
  t.match(JSON.stringify(audit), /"saml_signin".*not_allowed/, 'the refusal at the gate is audited');

  const guest = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}));
  t.match(guest.html, /Sign in to continue to Wiki/, 'without a session: the sign-in page, named for the app');
  t.match(guest.html, /name="return_to" value="\/saml\/continue\//, 'which comes back to the sign-in in progress');
});

t.test('signed requests (HTTP-Redirect and HTTP-POST), persistent NameID, and a certificate rotation', async (t) => {
  const s = await setUp(t);
  const keys = spKeyPair(t);
  const sp = await nodeSamlSp(s, { signing: keys, extra: { identifierFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' } });
  t.match(sp.metadata, /AuthnRequestsSigned="true"/);
  await addSp(t, s, sp.metadata, '--nameid', 'persistent');
  const cookie = await sessionCookie(s, 'ada@example.com');
  const first = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  const one = (await sp.saml.validatePostResponseAsync({ SAMLResponse: first.fields.SAMLResponse! })).profile!;
  t.not(one.nameID, 'ada@example.com', 'a persistent NameID is a pseudonym');
  t.match(one.nameID, /^[A-Za-z0-9_-]{43}$/);

  // HTTP-POST binding: the form node-saml makes, posted from "its site".
  const form = await sp.saml.getAuthorizeFormAsync('', undefined, {});
  const fields = Object.fromEntries([...form.matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
  const second = await browse({ url: `${s.url}/saml/sso`, form: fields }, cookie);
  const two = (await sp.saml.validatePostResponseAsync({ SAMLResponse: second.fields.SAMLResponse! })).profile!;
  t.equal(two.nameID, one.nameID, 'the same pseudonym every time');

  // Rotation: the next certificate is listed beside the current one; after retire it signs.
  const before = await idpCerts(s);
  t.equal((await cli(s.dataDir, ['saml', 'cert', 'rotate'])).code, 0);
  const listed = await idpCerts(s);
  t.equal(listed.length, 2, 'metadata lists the current and the next certificate');
  t.equal(listed[0], before[0]);
  t.equal((await cli(s.dataDir, ['saml', 'cert', 'retire'])).code, 0);
  const after = await idpCerts(s);
  t.same(after, [listed[1]], 'after retire: only the new one');
  const pinnedOld = await nodeSamlSp(s, { signing: keys });
  pinnedOld.saml.options.idpCert = before;
  const fresh = await nodeSamlSp(s, { signing: keys });
  const third = await browse(await fresh.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  t.ok((await fresh.saml.validatePostResponseAsync({ SAMLResponse: third.fields.SAMLResponse! })).profile, 'an SP with the new certificate accepts');
  const fourth = await browse(await pinnedOld.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  await t.rejects(pinnedOld.saml.validatePostResponseAsync({ SAMLResponse: fourth.fields.SAMLResponse! }), 'one pinning the retired certificate refuses');
});

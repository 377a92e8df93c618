// SAML step-up: an SP registered with --two-factor, or an AuthnRequest whose RequestedAuthnContext
// asks for REFEDS MFA, is never answered from a single-factor session. The person is sent to the
// second-factor page and back to the same sign-in, which then goes on with AuthnContextClassRef
// REFEDS MFA; going back to the sign-in (or opening it again) asks again. An account with no
// second factor gets a page saying how to add one, and the SP a signed Responder/AuthnFailed
// (checked by node-saml and by xmlsec1).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, tempDir, type TestServer, withAdmin } from '../helpers/server';
import { ACS, addSp, browse, formOf, idpCerts, nodeSamlSp, sessionCookie } from '../helpers/saml';

const MFA = 'https://refeds.org/profile/mfa';
const PPT = 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  for (const email of ['ada@example.com', 'bob@example.com']) {
    const r = await s.signup(email);
    if (r.status !== 200) throw new Error(r.text);
  }
  return s;
}

/** The session behind a page cookie (its token's sid). */
const sessionOf = (cookie: string): string => {
  const jwt = cookie.slice(cookie.indexOf('=') + 1).split('~')[0]!;
  return (JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as { sid: string }).sid;
};

/**
 * Ada signs in with her password alone, and her account has a second factor to give (as one with
 * a passkey that signed in with its password has): the row's flag is set after the sign-in, so the
 * session stays single-factor.
 */
async function singleFactorWithSecond(s: TestServer): Promise<string> {
  const cookie = await sessionCookie(s, 'ada@example.com');
  await s.db('user_account').where({ email_key: 'ada@example.com' }).update({ totp_enabled: true });
  return cookie;
}

/** What the second-factor page does once the code or passkey checks out (the store's reauthenticated). */
const proveSecondFactor = (s: TestServer, cookie: string) =>
  s
    .db('session')
    .where({ id: sessionOf(cookie) })
    .update({ two_factor: true, authenticated_at: Date.now() });

/** One hop of a browser: the answer's status, where it sends the browser, and its page. */
async function hop(url: string, cookie?: string) {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  return { status: res.status, location: res.headers.get('location'), html: await res.text() };
}

/** From the SP's redirect to the /saml/continue URL of the sign-in it started. */
async function continueUrl(s: TestServer, spUrl: string): Promise<string> {
  const sso = await hop(spUrl);
  if (sso.status !== 303 || !sso.location?.startsWith('/saml/continue/')) throw new Error(`no continue: ${sso.status} ${sso.html.slice(0, 200)}`);
  return `${s.url}${sso.location}`;
}

/** The Response a page's form carries, as XML. */
const responseXml = (fields: Record<string, string>) => Buffer.from(fields.SAMLResponse!, 'base64').toString('utf8');

t.test('saml sp add --two-factor: a single-factor session is asked for its second factor, then answered with REFEDS MFA', async (t) => {
  const s = await setUp(t);
  const sp = await nodeSamlSp(s);
  const added = await addSp(t, s, sp.metadata, '--name', 'Wiki', '--two-factor');
  t.equal((added as { two_factor?: boolean }).two_factor, true, '--json says two_factor');
  t.match((await cli(s.dataDir, ['saml', 'sp', 'show', added.id])).out, /two factors:\s+required/, 'show says so');
  t.match((await cli(s.dataDir, ['saml', 'sp', 'list'])).out, /TWO FACTORS[\s\S]*Wiki.*yes/, 'list says so');

  const cookie = await singleFactorWithSecond(s);
  const at = await continueUrl(s, await sp.saml.getAuthorizeUrlAsync('relay-2', undefined, {}));
  const handlePath = new URL(at).pathname;
  const first = await hop(at, cookie);
  t.equal(first.status, 303, 'not answered: sent on');
  const confirm = new URL(first.location!, s.url);
  t.equal(confirm.pathname, '/signin/confirm', "to Gatehouse's second-factor page");
  t.equal(confirm.searchParams.get('need'), 'second-factor');
  t.equal(confirm.searchParams.get('return'), handlePath, 'which comes back to this sign-in');

  // Going back to the sign-in (or opening it again) without the second factor asks again.
  const again = await hop(at, cookie);
  t.equal(again.status, 303);
  t.equal(new URL(again.location!, s.url).pathname, '/signin/confirm', 'opening it again asks again: never answered at the lower level');
  t.notMatch(again.html, /SAMLResponse/, 'no Response anywhere');

  // The second factor given: the same sign-in goes on.
  await proveSecondFactor(s, cookie);
  const done = await browse(at, cookie);
  t.equal(done.action, ACS, 'the Response goes to the ACS URL');
  t.equal(done.fields.RelayState, 'relay-2', 'RelayState as given');
  const xml = responseXml(done.fields);
  t.match(xml, new RegExp(`AuthnContextClassRef>${MFA}<`), 'AuthnContextClassRef: REFEDS MFA');
  const { profile } = await sp.saml.validatePostResponseAsync({ SAMLResponse: done.fields.SAMLResponse! });
  t.equal(profile!.nameID, 'ada@example.com', 'node-saml accepts it');

  // Answered once: the handle again is a page that says so.
  const replay = await browse(at, cookie);
  t.equal(replay.status, 400);
  t.equal(replay.action, null);
  t.match(replay.html, /finished already/);

  // A two-factor session goes straight through on the next sign-in.
  const next = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  t.equal(next.action, ACS, 'a session with two factors is answered at once');
});

t.test('an account with no second factor: a page that says how to add one, and a signed AuthnFailed for the SP', async (t) => {
  const s = await setUp(t);
  const sp = await nodeSamlSp(s);
  await addSp(t, s, sp.metadata, '--name', 'Wiki', '--two-factor');
  const bob = await sessionCookie(s, 'bob@example.com');
  const at = await continueUrl(s, await sp.saml.getAuthorizeUrlAsync('relay-3', undefined, {}));

  const page = await hop(at, bob);
  t.equal(page.status, 403, 'not signed in to the app');
  t.match(page.html, /Wiki<\/span> asks for a second factor/, 'names the app and what it needs');
  t.match(page.html, /<a href="\/account">Add a second factor<\/a>/, 'and where to add one');
  t.notMatch(page.html, /data-autopost/, 'the page stays to be read: nothing is posted by itself');
  const form = /<form method="post" action="([^"]+)" data-answer>([\s\S]*?)<\/form>/.exec(page.html);
  t.ok(form, 'a button takes the answer to the app');
  t.equal(form![1], ACS, 'the registered ACS URL');
  const { fields } = formOf(`<form method="post" action="${form![1]}" data-autopost>${form![2]}</form>`);
  t.equal(fields.RelayState, 'relay-3');
  const xml = responseXml(fields);
  t.match(xml, /StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Responder"><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed"\/>/);
  t.notMatch(xml, /Assertion/, 'no assertion');
  t.match(xml, /InResponseTo="[^"]+"/, 'in response to the request');
  await t.rejects(
    sp.saml.validatePostResponseAsync({ SAMLResponse: fields.SAMLResponse! }),
    /Responder error: Wiki needs a second factor/,
    'node-saml reads the failure, signed',
  );

  // xmlsec1 checks the failure's signature with the metadata's certificate.
  const dir = tempDir(t, 'gatehouse-xmlsec-');
  const cert = (await idpCerts(s))[0]!;
  fs.writeFileSync(path.join(dir, 'idp.pem'), `-----BEGIN CERTIFICATE-----\n${cert.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`);
  fs.writeFileSync(path.join(dir, 'response.xml'), xml);
  execFileSync(
    'xmlsec1',
    [
      '--verify',
      '--pubkey-cert-pem',
      path.join(dir, 'idp.pem'),
      '--id-attr:ID',
      'urn:oasis:names:tc:SAML:2.0:protocol:Response',
      path.join(dir, 'response.xml'),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  t.pass('xmlsec1 verified the AuthnFailed Response');

  // Answered once; the refusal is counted and audited.
  const replay = await hop(at, bob);
  t.equal(replay.status, 400, 'the handle again: finished already');
  t.notMatch(replay.html, /SAMLResponse/);
  const metrics = (await s.call('GET', '/metrics', { token: s.adminToken })).text;
  t.match(metrics, /gatehouse_saml_signins_total\{outcome="refused"\} 1/);
  const audit = (await cli(s.dataDir, ['--json', 'audit', '--account', 'bob@example.com'])).json;
  t.match(JSON.stringify(audit), /"saml_signin".*no_second_factor/);
});

t.test("an AuthnRequest's RequestedAuthnContext naming REFEDS MFA asks the same of an SP without --two-factor", async (t) => {
  const s = await setUp(t);
  const plain = await nodeSamlSp(s);
  await addSp(t, s, plain.metadata, '--name', 'Wiki');
  const cookie = await singleFactorWithSecond(s);

  // node-saml's default asks for PasswordProtectedTransport: answered as before.
  const ordinary = await browse(await plain.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  t.equal(ordinary.action, ACS, 'PasswordProtectedTransport (exact): answered from the password session');
  t.match(responseXml(ordinary.fields), new RegExp(`AuthnContextClassRef>${PPT}<`));

  for (const racComparison of ['exact', 'minimum'] as const) {
    const mfa = await nodeSamlSp(s, { extra: { authnContext: [MFA], racComparison } });
    const at = await continueUrl(s, await mfa.saml.getAuthorizeUrlAsync('', undefined, {}));
    const first = await hop(at, cookie);
    t.equal(first.status, 303, `REFEDS MFA (${racComparison}): not answered`);
    t.equal(new URL(first.location!, s.url).pathname, '/signin/confirm', 'sent to the second-factor page');
    // The handle names what the request asked for: without that part, it is no sign-in at all.
    const stripped = await hop(at.replace(/-mfa$/, ''), cookie);
    t.equal(stripped.status, 400, 'a handle cut short finds nothing');
    t.notMatch(stripped.html, /SAMLResponse/);
  }

  // A request that also accepts a single-factor class is met by it.
  const either = await nodeSamlSp(s, { extra: { authnContext: [MFA, PPT], racComparison: 'exact' } });
  t.equal((await browse(await either.saml.getAuthorizeUrlAsync('', undefined, {}), cookie)).action, ACS, 'MFA or PasswordProtectedTransport: answered');
  // X509 is one of the classes Gatehouse asserts (a one-factor passkey session's): read from the
  // same list the assertions are made from, it asks for one factor, and is answered (issue 73).
  const x509 = await nodeSamlSp(s, { extra: { authnContext: ['urn:oasis:names:tc:SAML:2.0:ac:classes:X509'], racComparison: 'exact' } });
  t.equal((await browse(await x509.saml.getAuthorizeUrlAsync('', undefined, {}), cookie)).action, ACS, 'X509 (exact): a class Gatehouse asserts, answered');

  // Asking for what Gatehouse never asserts is refused, never answered with less (outsider review).
  for (const [classes, racComparison] of [
    [[MFA], 'better'],
    [['urn:oasis:names:tc:SAML:2.0:ac:classes:Kerberos'], 'exact'],
    [['HTTPS://REFEDS.ORG/profile/mfa'], 'exact'],
  ] as const) {
    const asking = await nodeSamlSp(s, { extra: { authnContext: [...classes], racComparison } });
    const refused = await hop(await asking.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
    t.equal(refused.status, 400, `${racComparison} ${classes[0]}: refused`);
    t.match(refused.html, /asks for a sign-in Gatehouse never makes/);
    t.notMatch(refused.html, /SAMLResponse/);
  }
  // Better than a password: two factors.
  const better = await nodeSamlSp(s, { extra: { authnContext: [PPT], racComparison: 'better' } });
  const betterAt = await hop(await continueUrl(s, await better.saml.getAuthorizeUrlAsync('', undefined, {})), cookie);
  t.equal(new URL(betterAt.location!, s.url).pathname, '/signin/confirm', 'better than PasswordProtectedTransport: the second factor is asked');

  await proveSecondFactor(s, cookie);
  const mfa = await nodeSamlSp(s, { extra: { authnContext: [MFA], racComparison: 'exact' } });
  const done = await browse(await mfa.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  t.equal(done.action, ACS, 'with two factors: answered');
  t.match(responseXml(done.fields), new RegExp(`AuthnContextClassRef>${MFA}<`));
});

t.test('a guest signs in on the way: the sign-in page comes back to the same sign-in, which still asks for the second factor', async (t) => {
  const s = await setUp(t);
  const mfa = await nodeSamlSp(s, { extra: { authnContext: [MFA], racComparison: 'exact' } });
  await addSp(t, s, mfa.metadata, '--name', 'Wiki');
  const at = await continueUrl(s, await mfa.saml.getAuthorizeUrlAsync('', undefined, {}));
  const handlePath = new URL(at).pathname;
  t.match(handlePath, /^\/saml\/continue\/[A-Za-z0-9_-]{32}-mfa$/, "the handle carries the request's wish, in characters a return path takes");

  const guest = await fetch(at, { redirect: 'manual' });
  const page = await guest.text();
  t.match(page, `name="return_to" value="${handlePath}"`, 'the sign-in page carries the sign-in in progress');
  const csrfCookie = guest.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('gatehouse_csrf='))!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  const signedIn = await fetch(`${s.url}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: s.url },
    body: new URLSearchParams({ csrf, email: 'ada@example.com', password: 'correct horse battery staple', return_to: handlePath }).toString(),
  });
  t.equal(signedIn.status, 303);
  t.equal(signedIn.headers.get('location'), handlePath, 'the password sign-in goes back to it');
  const session = signedIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('gatehouse_session='))!;
  const back = await hop(at, session);
  t.equal(back.status, 403, 'her account has no second factor: the page says so');
  t.match(back.html, /Wiki<\/span> asks for a second factor/);
  t.match(back.html, /name="SAMLResponse"/, 'and its button carries the failure to the app');
});

// Single logout asked for by a service provider (node-saml, which does not sign): a LogoutRequest
// ends the browser's Gatehouse session only when it names the sign-in this very session made at
// that SP (its NameID and SessionIndex), is addressed to /saml/slo, and was not answered before.
// Anything else, a plain cross-site GET above all, gets a LogoutResponse saying Requester and the
// session stays (logout CSRF). The same request sent several times at once ends the session once.
import { deflateRawSync } from 'node:zlib';
import t from 'tap';
import type { Profile } from '@node-saml/node-saml';
import { addSp, browse, nodeSamlSp, type Posted, sessionCookie, SP_ENTITY } from '../helpers/saml';
import { countRows, setSignup, type TestServer, withAdmin } from '../helpers/server';

/** node-saml's own logout endpoint (HTTP-POST): where every LogoutResponse goes. */
const SP_SLO = 'http://localhost:4999/saml/slo';
const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success';
const REQUESTER = 'urn:oasis:names:tc:SAML:2.0:status:Requester';

async function setUp(t: Parameters<typeof withAdmin>[0]) {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  for (const email of ['ada@example.com', 'bob@example.com']) await s.signup(email);
  const sp = await nodeSamlSp(s, { extra: { logoutUrl: `${s.config.publicUrl}/saml/slo`, logoutCallbackUrl: SP_SLO } });
  await addSp(t, s, sp.metadata, '--name', 'Wiki');
  return { s, sp };
}

/** A session of `email` that signed in at the SP: its cookie, and what the SP knows of it (NameID, SessionIndex). */
async function signedIn(s: TestServer, sp: Awaited<ReturnType<typeof nodeSamlSp>>, email = 'ada@example.com') {
  const cookie = await sessionCookie(s, email);
  const posted = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  const { profile } = await sp.saml.validatePostResponseAsync({ SAMLResponse: posted.fields.SAMLResponse! });
  return { cookie, profile: profile! };
}

/** Whether the session behind this cookie is still open (its account page answers). */
const open = async (s: TestServer, cookie: string) => (await fetch(`${s.url}/account`, { headers: { cookie }, redirect: 'manual' })).status === 200;

/** An unsigned LogoutRequest, as anyone can write one. */
function logoutRequest(
  s: TestServer,
  o: { id?: string; issuer?: string; nameId: string; sessionIndexes: string[]; destination?: string | null; issued?: number },
): string {
  const destination = o.destination === undefined ? `${s.config.publicUrl}/saml/slo` : o.destination;
  return (
    `<samlp:LogoutRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="${o.id ?? `_${Math.random().toString(16).slice(2)}`}" Version="2.0" IssueInstant="${new Date(o.issued ?? Date.now()).toISOString()}"${destination === null ? '' : ` Destination="${destination}"`}>` +
    `<saml:Issuer>${o.issuer ?? SP_ENTITY}</saml:Issuer><saml:NameID Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress">${o.nameId}</saml:NameID>` +
    o.sessionIndexes.map((i) => `<samlp:SessionIndex>${i}</samlp:SessionIndex>`).join('') +
    `</samlp:LogoutRequest>`
  );
}

/** The HTTP-Redirect binding: a plain GET (a link, an image on another site). */
const viaGet = (s: TestServer, xml: string) =>
  `${s.config.publicUrl}/saml/slo?SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}`;

/** The top-level status of the LogoutResponse the page posts to the SP (null: no LogoutResponse). */
function statusOf(p: Posted): string | null {
  if (p.action !== SP_SLO || !p.fields.SAMLResponse) return null;
  const xml = Buffer.from(p.fields.SAMLResponse, 'base64').toString('utf8');
  return /<samlp:Status><samlp:StatusCode Value="([^"]+)"/.exec(xml)?.[1] ?? null;
}

t.test("the SP's own LogoutRequest ends the session; node-saml checks the LogoutResponse", async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  const sp = await nodeSamlSp(s, { extra: { logoutUrl: `${s.config.publicUrl}/saml/slo`, logoutCallbackUrl: SP_SLO } });
  // node-saml checks a LogoutResponse's status, InResponseTo and signature on the HTTP-Redirect
  // binding only: its logout URL is registered with that binding.
  const metadata = sp.metadata.replace(/(SingleLogoutService Binding=")[^"]+/, '$1urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect');
  t.not(metadata, sp.metadata);
  await addSp(t, s, metadata, '--name', 'Wiki');
  const { cookie, profile } = await signedIn(s, sp);
  const answer = async (url: string, cookie: string) => {
    const res = await fetch(url, { headers: { cookie }, redirect: 'manual' });
    await res.arrayBuffer();
    const to = new URL(res.headers.get('location') ?? 'about:blank');
    t.equal(`${to.origin}${to.pathname}`, SP_SLO, "the LogoutResponse goes to the SP's registered logout URL");
    return sp.saml.validateRedirectAsync(Object.fromEntries(to.searchParams), to.search.slice(1));
  };

  // node-saml's request for a SessionIndex this session never had: refused, and node-saml sees the failure.
  const forged = await sp.saml.getLogoutUrlAsync({ ...(profile as Profile), sessionIndex: '_not-this-session' }, 'bye', {});
  await t.rejects(answer(forged, cookie), /Bad status code: urn:oasis:names:tc:SAML:2.0:status:Requester/, 'node-saml reads a Requester status');
  t.ok(await open(s, cookie), 'the session stays open');

  const genuine = await sp.saml.getLogoutUrlAsync(profile as Profile, 'bye', {});
  t.match(await answer(genuine, cookie), { loggedOut: true }, 'node-saml accepts the LogoutResponse (signature, issuer, status, InResponseTo)');
  t.notOk(await open(s, cookie), 'the Gatehouse session has ended');
});

t.test('logout CSRF: a request that does not name this session’s sign-in at that SP keeps the session', async (t) => {
  const { s, sp } = await setUp(t);
  const blog = await nodeSamlSp(s, {
    entity: 'https://blog.example.test/saml',
    extra: { logoutUrl: `${s.config.publicUrl}/saml/slo`, logoutCallbackUrl: SP_SLO },
  });
  await addSp(t, s, blog.metadata, '--name', 'Blog');
  const { cookie, profile } = await signedIn(s, sp);
  const other = await sessionCookie(s, 'ada@example.com');
  const nameId = profile.nameID;
  const index = profile.sessionIndex as string;
  t.match(index, /^_[A-Za-z0-9_-]{43}$/, 'the SP knows the SessionIndex of the Response');

  const scenarios: Array<{ name: string; xml: string; cookie?: string | null; why: RegExp }> = [
    { name: 'another NameID', xml: logoutRequest(s, { nameId: 'bob@example.com', sessionIndexes: [index] }), why: /did not sign in to Wiki/ },
    { name: 'another SessionIndex', xml: logoutRequest(s, { nameId, sessionIndexes: ['_someone-else'] }), why: /did not sign in to Wiki/ },
    { name: 'no SessionIndex (every session)', xml: logoutRequest(s, { nameId, sessionIndexes: [] }), why: /does not name a sign-in/ },
    { name: 'two SessionIndexes', xml: logoutRequest(s, { nameId, sessionIndexes: [index, '_other'] }), why: /does not name a sign-in/ },
    { name: 'its SessionIndex twice', xml: logoutRequest(s, { nameId, sessionIndexes: [index, index] }), why: /does not name a sign-in/ },
    { name: 'no Destination', xml: logoutRequest(s, { nameId, sessionIndexes: [index], destination: null }), why: /not addressed to/ },
    {
      name: 'another Destination',
      xml: logoutRequest(s, { nameId, sessionIndexes: [index], destination: 'https://elsewhere.example.com/saml/slo' }),
      why: /not addressed to/,
    },
    { name: 'too old', xml: logoutRequest(s, { nameId, sessionIndexes: [index], issued: Date.now() - 60 * 60_000 }), why: /too old/ },
    {
      name: 'an SP this session never signed in to',
      xml: logoutRequest(s, { issuer: 'https://blog.example.test/saml', nameId, sessionIndexes: [index] }),
      why: /did not sign in to Blog/,
    },
    { name: 'another session of the same account', xml: logoutRequest(s, { nameId, sessionIndexes: [index] }), cookie: other, why: /did not sign in to Wiki/ },
    { name: 'a browser without a session', xml: logoutRequest(s, { nameId, sessionIndexes: [index] }), cookie: null, why: /does not name a sign-in/ },
  ];
  for (const c of scenarios) {
    const out = await browse(viaGet(s, c.xml), c.cookie === null ? undefined : (c.cookie ?? cookie));
    t.equal(statusOf(out), REQUESTER, `${c.name}: the SP is answered Requester`);
    const xml = Buffer.from(out.fields.SAMLResponse ?? '', 'base64').toString('utf8');
    t.match(xml, c.why, `${c.name}: the StatusMessage says why`);
    t.match(out.html, /You are still signed in to Gatehouse/, `${c.name}: the page says the session stays`);
    t.ok(await open(s, cookie), `${c.name}: the session stays open`);
  }
  t.ok(await open(s, other), 'and so does the other session');
  t.equal(await countRows(s, 'saml_logout_request'), 0, 'no refused request keeps a row');

  // The control: the same request naming this session's sign-in at Wiki ends it.
  const right = logoutRequest(s, { id: '_right', nameId, sessionIndexes: [index] });
  t.equal(statusOf(await browse(viaGet(s, right), cookie)), SUCCESS, 'NameID and SessionIndex of this session at Wiki: Success');
  t.notOk(await open(s, cookie), 'that session has ended');
  t.ok(await open(s, other), 'the other session of the same account is still open');
  t.equal(statusOf(await browse(viaGet(s, right), other)), REQUESTER, 'the same request again, from the other session: Requester');
  t.ok(await open(s, other));
});

t.test('the same LogoutRequest sent several times at once ends the session once', async (t) => {
  const { s, sp } = await setUp(t);
  const { cookie, profile } = await signedIn(s, sp);
  const xml = logoutRequest(s, { id: '_at-once', nameId: profile.nameID, sessionIndexes: [profile.sessionIndex as string] });
  const answers = await Promise.all(Array.from({ length: 8 }, () => browse(viaGet(s, xml), cookie)));
  const statuses = answers.map(statusOf);
  t.equal(statuses.filter((v) => v === SUCCESS).length, 1, `one Success among ${JSON.stringify(statuses)}`);
  t.notOk(await open(s, cookie), 'the session has ended');
  t.equal(await countRows(s, 'saml_logout_request'), 1, 'the ID is kept once');

  // Its ID stays used: the request again is answered Requester (and a new session is untouched).
  const again = await signedIn(s, sp);
  t.equal(statusOf(await browse(viaGet(s, xml), again.cookie)), REQUESTER, 'the replay is refused');
  t.ok(await open(s, again.cookie));
});

// Two packaged instances on one PostgreSQL database behind one public URL: an AuthnRequest that
// arrives at one is answered by the other (the sign-in in progress is in the store), and the
// Response satisfies a service provider nobody here wrote (@node-saml/node-saml). Both sign with
// the one certificate the store keeps.
import t from 'tap';
import { onPostgres } from '../helpers/pg';
import { ACS, browse, formOf } from '../helpers/saml';
import { SAML } from '@node-saml/node-saml';

const PUBLIC = 'http://id.example.test';
const PW = 'saml instance password 1';

t.test('a SAML sign-in started on one instance is finished on the other', async (t) => {
  const pg = await onPostgres(t);
  if (!pg) return;
  t.equal((await pg.shell(['bootstrap-admin', '--email', 'admin@example.test', '--password-env', 'PW'], { PW })).code, 0);
  const [a, b] = await Promise.all([pg.serve(['--bcrypt-cost', '4', '--public-url', PUBLIC]), pg.serve(['--bcrypt-cost', '4', '--public-url', PUBLIC])]);
  const metadata = await (await fetch(`${a.url}/saml/metadata`)).text();
  t.equal(metadata, await (await fetch(`${b.url}/saml/metadata`)).text(), 'both instances publish the same metadata and certificate');
  const cert = /<ds:X509Certificate>([^<]+)</.exec(metadata)![1]!;

  const sp = new SAML({
    callbackUrl: ACS,
    entryPoint: `${PUBLIC}/saml/sso`,
    issuer: 'https://app.example.test/saml',
    audience: 'https://app.example.test/saml',
    idpCert: cert,
    idpIssuer: `${PUBLIC}/saml/metadata`,
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: true,
    validateInResponseTo: 'always' as never,
    identifierFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  });
  const add = await pg.shell(['saml', 'sp', 'add', '--entity-id', 'https://app.example.test/saml', '--acs-url', ACS, '--name', 'App']);
  t.equal(add.code, 0, add.stderr);

  // The browser's session is on instance B (signed in there).
  const signin = await fetch(`${b.url}/action/user_account/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ attributes: { email: 'admin@example.test', password: PW } }),
  });
  const items = (await signin.json()) as Array<{ ResponseType: string; Attributes: { key?: string; value?: string } }>;
  const get = (k: string) => items.find((i) => i.Attributes.key === k)?.Attributes.value;
  const cookie = `gatehouse_session=${get('token')}~${get('refresh_token')}`;

  // The SP's redirect reaches instance A, which keeps the request and answers with the hop.
  const url = (await sp.getAuthorizeUrlAsync('on-a', undefined, {})).replace(PUBLIC, a.url);
  const first = await fetch(url, { redirect: 'manual' });
  t.equal(first.status, 303);
  const hop = first.headers.get('location')!;
  t.match(hop, /^\/saml\/continue\/[A-Za-z0-9_-]{32}$/);

  // The browser's next request lands on instance B, which finds the request and answers it.
  const answered = await browse(`${b.url}${hop}`, cookie);
  t.equal(answered.action, ACS);
  t.equal(answered.fields.RelayState, 'on-a');
  const { profile } = await sp.validatePostResponseAsync({ SAMLResponse: answered.fields.SAMLResponse! });
  t.equal(profile!.nameID, 'admin@example.test', 'node-saml accepts the Response B made for A’s request');

  // Answered once: the same handle on A now refuses.
  const again = await fetch(`${a.url}${hop}`, { headers: { cookie } });
  t.equal(again.status, 400);
  t.equal(formOf(await again.text()).action, null, 'a second answer is refused on the other instance');
});

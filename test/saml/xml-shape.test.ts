// What xml.ts says of XML from outside, held to it: a processing instruction is refused wherever it
// is (before, inside or after the root; only the XML declaration, first), a DOCTYPE anywhere, an
// entity other than XML's own and nesting far deeper than SAML's are refused, and a comment is
// left out of a value without cutting it short (CVE-2017-11427). Then one such message on the
// wire: a page says why, nothing is sent.
import { deflateRawSync } from 'node:zlib';
import t from 'tap';
import { INCOMING, NS, childText, parseChecked } from '../../src/saml/xml';
import { ACS, addSp, browse, nodeSamlSp, sessionCookie, SP_ENTITY } from '../helpers/saml';
import { setSignup, withAdmin } from '../helpers/server';

const request = (inside = '', o: { before?: string; after?: string; issuer?: string } = {}) =>
  `${o.before ?? ''}<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_${Math.random().toString(16).slice(2)}" Version="2.0" IssueInstant="${new Date().toISOString()}"><saml:Issuer>${o.issuer ?? SP_ENTITY}</saml:Issuer>${inside}</samlp:AuthnRequest>${o.after ?? ''}`;

t.test('the shape check refuses processing instructions, DOCTYPEs and unknown entities anywhere', async (t) => {
  const refused: Array<[string, string, RegExp]> = [
    ['a PI inside the root', request('<?evil data?>'), /processing instruction/],
    ['a PI deeper inside', request('<samlp:Extensions><x><?evil data?></x></samlp:Extensions>'), /processing instruction/],
    ['a PI in an element’s text', request('', { issuer: `${SP_ENTITY}<?evil?>` }), /processing instruction/],
    ['a PI before the root', request('', { before: '<?xml-stylesheet href="x.xsl"?>' }), /processing instruction/],
    ['a PI after the root', request('', { after: '<?evil?>' }), /processing instruction/],
    ['a PI after the declaration', request('', { before: '<?xml version="1.0"?><?evil?>' }), /processing instruction/],
    ['a second declaration', request('', { before: '<?xml version="1.0"?><?xml version="1.0"?>' }), /processing instruction|not well-formed/],
    ['a declaration after a comment', request('', { before: '<!-- c --><?xml version="1.0"?>' }), /processing instruction|not well-formed/],
    ['a DOCTYPE', request('', { before: '<!DOCTYPE r>' }), /DOCTYPE/],
    ['a DOCTYPE in lower case', request('', { before: '<!doctype r>' }), /DOCTYPE/],
    ['an ENTITY declaration', request('<!ENTITY x "y">'), /DOCTYPE|entity/],
    ['an undeclared entity', request('<x>&xxe;</x>'), /not well-formed/],
    ['nesting no SAML message has', request(`${'<x>'.repeat(200)}${'</x>'.repeat(200)}`), /nested deeper than 64 levels/],
  ];
  for (const [name, xml, why] of refused) await t.rejects(parseChecked(xml, INCOMING), { code: 'invalid_input', message: why }, name);

  const accepted: Array<[string, string]> = [
    ['the XML declaration', request('', { before: '<?xml version="1.0" encoding="UTF-8"?>' })],
    ['the declaration after white space', request('', { before: '\n<?xml version="1.0"?>\n' })],
    ['XML’s own entities and character references', request('<x>&lt;&amp;&#x41;&#66;</x>')],
    ['comments', request('<!-- a comment --><x><!-- another --></x>', { before: '<!-- first -->' })],
  ];
  for (const [name, xml] of accepted) t.ok(await parseChecked(xml, INCOMING), name);

  // A comment inside a value neither cuts it short nor stays in it.
  const root = await parseChecked(request('', { issuer: 'https://app.example.test<!-- cut here -->/saml' }), INCOMING);
  t.equal(childText(root, 'Issuer', NS.assertion), SP_ENTITY, 'the Issuer is read whole, without the comment');
});

t.test('on the wire: a PI inside a request’s root is refused with a page, and nothing goes to the SP', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  await s.signup('ada@example.com');
  const sp = await nodeSamlSp(s);
  await addSp(t, s, sp.metadata, '--name', 'Wiki');
  const cookie = await sessionCookie(s, 'ada@example.com');
  const redirect = (xml: string) => `${s.config.publicUrl}/saml/sso?SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}`;
  t.equal((await browse(redirect(request()), cookie)).action, ACS, 'the control: the same request without it is answered');
  const pi = await browse(redirect(request('<?evil data?>')), cookie);
  t.equal(pi.status, 400);
  t.equal(pi.action, null, 'nothing is posted to the SP');
  t.match(pi.html, /processing instruction/);
  const posted = await browse({ url: `${s.url}/saml/sso`, form: { SAMLRequest: Buffer.from(request('<?evil?>')).toString('base64') } }, cookie);
  t.equal(posted.action, null, 'HTTP-POST: the same');
  t.match(posted.html, /processing instruction/);
  const comment = await browse(redirect(request('', { issuer: 'https://app.example.test<!---->/saml' })), cookie);
  t.equal(comment.action, ACS, 'a comment inside the Issuer: still Wiki, answered');
});

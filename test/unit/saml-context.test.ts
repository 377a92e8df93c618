// How the person signed in, as a SAML assertion (AuthnContextClassRef), an ID token (amr, acr) and a request (acr_values, claims) say it, for each way in.
import t from 'tap';
import { ACR_MFA, ACR_SFA, acrOf, amrOf, asksForMfa, authnContextOf as authnContext } from '../../src/accounts/assurance';

const way = (method: 'password' | 'passkey' | 'provider', two_factor: boolean, upstream_amr: string | null = null) => ({ method, two_factor, upstream_amr });

t.test('the AuthnContextClassRef names password, two factors, passkey or another provider', async (t) => {
  t.equal(authnContext(way('password', false)), 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport');
  t.equal(authnContext(way('password', true)), ACR_MFA);
  t.equal(authnContext(way('passkey', true)), ACR_MFA, 'a passkey that verified its user is two factors');
  t.equal(authnContext(way('passkey', false)), 'urn:oasis:names:tc:SAML:2.0:ac:classes:X509');
  t.equal(authnContext(way('provider', false)), 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified');
  t.equal(authnContext(way('provider', true)), ACR_MFA);
});

t.test("OpenID Connect's amr and acr say the same facts", async (t) => {
  t.same(amrOf(way('password', false)), ['pwd']);
  t.same(amrOf(way('password', true)), ['pwd', 'otp', 'mfa']);
  t.same(amrOf(way('passkey', true)), ['hwk', 'user', 'mfa']);
  t.same(amrOf(way('provider', false)), ['fed']);
  t.same(amrOf(way('provider', true)), ['fed', 'otp', 'mfa']);
  t.same(amrOf({ ...way('password', true), second_factor: 'hwk' }), ['pwd', 'hwk', 'user', 'mfa'], 'a password, then a passkey as the second factor');
  t.same(amrOf({ ...way('password', true), second_factor: 'otp' }), ['pwd', 'otp', 'mfa']);
  t.equal(acrOf(way('password', false)), ACR_SFA);
  t.equal(acrOf(way('passkey', true)), ACR_MFA);
});

t.test("an upstream provider's own amr is kept, registered values only, and never makes two factors", async (t) => {
  t.same(amrOf(way('provider', false, '["pwd","mfa","otp","<script>",7]')), ['fed', 'pwd', 'otp']);
  t.equal(acrOf(way('provider', false, '["mfa"]')), ACR_SFA);
  t.same(amrOf(way('provider', true, '["pwd","otp"]')), ['fed', 'pwd', 'otp', 'mfa']);
  t.same(amrOf(way('provider', false, 'not json')), ['fed']);
});

t.test('a request asks for two factors by acr_values or an essential acr claim', async (t) => {
  t.ok(asksForMfa(`${ACR_MFA}`, undefined));
  t.ok(asksForMfa(`${ACR_SFA} ${ACR_MFA}`, undefined), 'MFA among the values asked: it is given when it can be');
  t.notOk(asksForMfa(ACR_SFA, undefined));
  t.ok(asksForMfa(undefined, { id_token: { acr: { essential: true, value: ACR_MFA } } }));
  t.ok(asksForMfa(undefined, { id_token: { acr: { essential: true, values: [ACR_MFA] } } }));
  t.notOk(asksForMfa(undefined, { id_token: { acr: { essential: true, values: [ACR_MFA, ACR_SFA] } } }), 'either level will do');
  t.notOk(asksForMfa(undefined, { id_token: { acr: { value: ACR_MFA } } }), 'a voluntary claim does not demand');
});

// How the person signed in, as a SAML assertion (AuthnContextClassRef) and an ID token (amr) say it, for each way in.
import t from 'tap';
import { amrOf, authnContextOf as authnContext } from '../../src/accounts/assurance';

t.test('the AuthnContextClassRef names password, two factors, passkey or another provider', async (t) => {
  t.equal(authnContext({ method: 'password', two_factor: false }), 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport');
  t.equal(authnContext({ method: 'password', two_factor: true }), 'https://refeds.org/profile/mfa');
  t.equal(authnContext({ method: 'passkey', two_factor: false }), 'urn:gatehouse:ac:classes:passkey');
  t.equal(authnContext({ method: 'provider', two_factor: false }), 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified');
  t.equal(authnContext({ method: 'provider', two_factor: true }), 'https://refeds.org/profile/mfa');
});

t.test("OpenID Connect's amr says the same facts", async (t) => {
  t.same(amrOf({ method: 'password', two_factor: false }), ['pwd']);
  t.same(amrOf({ method: 'password', two_factor: true }), ['pwd', 'otp']);
  t.same(amrOf({ method: 'passkey', two_factor: false }), ['hwk', 'user']);
  t.same(amrOf({ method: 'provider', two_factor: false }), ['fed']);
  t.same(amrOf({ method: 'provider', two_factor: true }), ['fed', 'otp']);
});

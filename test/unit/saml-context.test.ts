// What a SAML assertion says of how the person signed in (AuthnContextClassRef), for each way in.
import t from 'tap';
import { authnContext } from '../../src/saml/signin';

t.test('the AuthnContextClassRef names password, two factors, passkey or another provider', async (t) => {
  t.equal(authnContext({ method: 'password', two_factor: false }), 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport');
  t.equal(authnContext({ method: 'password', two_factor: true }), 'https://refeds.org/profile/mfa');
  t.equal(authnContext({ method: 'passkey', two_factor: false }), 'urn:gatehouse:ac:classes:passkey');
  t.equal(authnContext({ method: 'provider', two_factor: false }), 'urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified');
  t.equal(authnContext({ method: 'provider', two_factor: true }), 'https://refeds.org/profile/mfa');
});

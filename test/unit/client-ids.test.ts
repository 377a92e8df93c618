// An id that begins with a dash reads as an option on the command line (`client show -Xy…`,
// `keys retire -Xy…`): the flaky 'client show printed no JSON' under CI was one id in 64, and so
// was a flaky `keys retire` (exit 2) in test/attacks/oidc.test.ts.
import t from 'tap';
import { newShellSafeId } from '../../src/auth/ids';
import { newSigningKey } from '../../src/auth/keys';
import { newClientId, newClientSecret } from '../../src/oidc/clients';
import { newAppPassword } from '../../src/accounts/app-passwords';
import { newApiKey } from '../../src/auth/api-keys';
import { newScimToken } from '../../src/scim/tokens';

t.test('ids typed on the command line never start with a dash or an underscore', async (t) => {
  for (let i = 0; i < 2000; i++) {
    const id = newClientId();
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{15}$/.test(id)) t.fail(`bad client id ${id}`);
    const session = newShellSafeId(16);
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{21}$/.test(session)) t.fail(`bad session id ${session}`);
  }
  for (let i = 0; i < 200; i++) {
    const { kid } = await newSigningKey('ES256');
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{15}$/.test(kid)) t.fail(`bad kid ${kid}`);
  }
  t.pass('2000 client and session ids, 200 kids, none starting with - or _');
});

// A secret printed for a shell is pasted after `-u id:`, `--client-secret` or into an env file:
// one that begins with a dash (one in 64 of a bare base64url string) reads as an option.
t.test('secrets printed for the shell never start with a dash', async (t) => {
  const kinds: Array<[string, () => string, RegExp]> = [
    ['client secret', newClientSecret, /^[A-Za-z0-9][A-Za-z0-9_-]{42}$/],
    ['app password', newAppPassword, /^[A-Za-z0-9][A-Za-z0-9_-]{7}(-[A-Za-z0-9_-]{8}){3}$/],
    ['API key', newApiKey, /^gh_[A-Za-z0-9_-]{32}$/],
    ['SCIM token', newScimToken, /^ghscim_[A-Za-z0-9_-]{32}$/],
  ];
  for (const [what, make, shape] of kinds) {
    let bad = 0;
    for (let i = 0; i < 3000; i++) if (!shape.test(make())) bad++;
    t.equal(bad, 0, `3000 ${what}s, none starting with a dash, each of its shape`);
  }
});

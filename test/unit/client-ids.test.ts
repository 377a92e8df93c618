// An id that begins with a dash reads as an option on the command line (`client show -Xy…`,
// `keys retire -Xy…`): the flaky 'client show printed no JSON' under CI was one id in 64, and so
// was a flaky `keys retire` (exit 2) in test/attacks/oidc.test.ts.
import t from 'tap';
import { newShellSafeId } from '../../src/auth/ids';
import { newSigningKey } from '../../src/auth/keys';
import { newClientId } from '../../src/oidc/clients';

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

// A client id that begins with a dash reads as an option on the command line (`client show -Xy…`):
// the flaky 'client show printed no JSON' under CI was one id in 64.
import t from 'tap';
import { newClientId } from '../../src/oidc/clients';

t.test('OIDC client ids never start with a dash (the shell would read one as an option)', async (t) => {
  for (let i = 0; i < 2000; i++) {
    const id = newClientId();
    if (!/^[A-Za-z0-9][A-Za-z0-9_-]{15}$/.test(id)) t.fail(`bad id ${id}`);
  }
  t.pass('2000 ids, none starting with - or _');
});

// LDAPS and StartTLS with a test certificate (openssl req), through OpenLDAP's tools: a password
// in clear text from off the machine is refused (confidentialityRequired, 13), the same bind over
// StartTLS or LDAPS succeeds, and StartTLS is offered in the root DSE only with a certificate.
import os from 'node:os';
import t from 'tap';
import { startLdap } from '../../src/ldap/server';
import { cli } from '../helpers/cli';
import { BASE, ldapTool, person, testCertificate } from '../helpers/ldap';
import { PASSWORD, withAdmin } from '../helpers/server';

/** This machine's first address that is not loopback: a client there is "off the machine" to the listener. */
const outside = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

t.test('LDAPS and StartTLS; a clear-text password from off the machine is refused', async (t) => {
  if (!outside) {
    t.fail('this machine has no non-loopback IPv4 address to test a remote client from');
    return;
  }
  const s = await withAdmin(t);
  await cli(s.dataDir, ['user', 'create', '--email', 'ann@example.com', '--password-env', 'PW'], { env: { PW: PASSWORD } });
  const ldap = await startLdap(
    s.core,
    {
      host: '0.0.0.0',
      port: 0,
      tlsPort: 0,
      tls: testCertificate(t),
      baseDn: BASE,
      readers: [],
      allowInsecureBind: false,
    },
    s.core.logger,
  );
  t.teardown(() => ldap.close());
  const plain = `ldap://${outside}:${ldap.port}`;
  const as = ['-x', '-D', person('ann'), '-w', PASSWORD];

  const clear = await ldapTool('ldapwhoami', ['-H', plain, ...as]);
  t.equal(clear.code, 13, 'a clear-text password from another address: confidentialityRequired');
  const startTls = await ldapTool('ldapwhoami', ['-ZZ', '-H', plain, ...as]);
  t.equal(startTls.code, 0, startTls.err);
  t.equal(startTls.out.trim(), `dn:${person('ann')}`, 'the same bind after StartTLS');
  const ldaps = await ldapTool('ldapwhoami', ['-H', `ldaps://${outside}:${ldap.tlsPort}`, ...as]);
  t.equal(ldaps.code, 0, ldaps.err);
  t.equal(ldaps.out.trim(), `dn:${person('ann')}`, 'over LDAPS');
  const search = await ldapTool('ldapsearch', ['-ZZ', '-H', plain, ...as, '-b', BASE, '(uid=ann)', 'mail']);
  t.match(search.out, /mail: ann@example\.com/, 'a search after StartTLS');
  const dse = await ldapTool('ldapsearch', ['-x', '-H', plain, '-b', '', '-s', 'base', 'supportedExtension']);
  t.match(dse.out, /supportedExtension: 1\.3\.6\.1\.4\.1\.1466\.20037/, 'StartTLS offered in the root DSE');
});

t.test('without a certificate, StartTLS is refused in words and not offered', async (t) => {
  const s = await withAdmin(t);
  const ldap = await startLdap(
    s.core,
    { host: '127.0.0.1', port: 0, tlsPort: null, tls: null, baseDn: BASE, readers: [], allowInsecureBind: false },
    s.core.logger,
  );
  t.teardown(() => ldap.close());
  const url = `ldap://127.0.0.1:${ldap.port}`;
  const r = await ldapTool('ldapwhoami', ['-ZZ', '-x', '-H', url]);
  t.not(r.code, 0);
  t.match(r.err, /no certificate/);
  const dse = await ldapTool('ldapsearch', ['-x', '-H', url, '-b', '', '-s', 'base', 'supportedExtension']);
  t.notMatch(dse.out, /1\.3\.6\.1\.4\.1\.1466\.20037/);
});

// SAML with nested groups, read by a service provider nobody here wrote (@node-saml/node-saml):
// a person in a group inside the SP's allowed group passes its gate, and the groups attribute
// (isMemberOf) names every group they are in, directly or not; taking the inner group out shuts
// the gate at the next sign-in.
import t from 'tap';
import { cli } from '../helpers/cli';
import { setSignup, withAdmin } from '../helpers/server';
import { addSp, browse, nodeSamlSp, sessionCookie } from '../helpers/saml';

t.test('the gate and the groups attribute follow nesting', async (t) => {
  const s = await withAdmin(t);
  await setSignup(s, s.adminToken, 2097057);
  t.equal((await s.signup('ada@example.com')).status, 200);
  for (const args of [
    ['group', 'create', 'staff'],
    ['group', 'create', 'engineering'],
    ['group', 'create', 'platform'],
    ['group', 'add', 'platform', 'ada@example.com'],
    ['group', 'add-group', 'engineering', 'platform'],
    ['group', 'add-group', 'staff', 'engineering'],
  ])
    t.equal((await cli(s.dataDir, args)).code, 0, args.join(' '));
  const sp = await nodeSamlSp(s);
  await addSp(t, s, sp.metadata, '--name', 'Wiki', '--allowed-group', 'staff');
  const cookie = await sessionCookie(s, 'ada@example.com');

  const posted = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  t.equal(posted.status, 200, 'platform ⊂ engineering ⊂ staff: ada passes the gate');
  const { profile } = await sp.saml.validatePostResponseAsync({ SAMLResponse: posted.fields.SAMLResponse! });
  t.same(
    [profile!['urn:oid:1.3.6.1.4.1.5923.1.5.1.1']].flat().sort(),
    ['engineering', 'platform', 'staff', 'users'],
    'isMemberOf names every group, directly or not',
  );

  t.equal((await cli(s.dataDir, ['group', 'remove-group', 'staff', 'engineering'])).code, 0);
  const shut = await browse(await sp.saml.getAuthorizeUrlAsync('', undefined, {}), cookie);
  t.equal(shut.status, 403, 'taken out: the gate shuts at the next sign-in');
});

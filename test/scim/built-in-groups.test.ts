// The built-in groups (administrators, users) are managed groups wherever apps see groups (here
// the LDAP directory's memberOf), but SCIM exposes as Group resources only the groups it may
// provision: a SCIM User's `groups` lists only those, so every groups[].$ref answers 200 (the
// built-in `users` linked to a 404 before).
import t from 'tap';
import { cli } from '../helpers/cli';
import { PASSWORD } from '../helpers/server';
import { BASE, ldapServer, ldapTool, ldif, person } from '../helpers/ldap';

type Json = Record<string, any>;

t.test("every $ref of a SCIM User's groups answers; LDAP still shows the built-in groups", async (t) => {
  const { s, url } = await ldapServer(t);
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'idp']);
  const token: string = made.json.token;
  const get = async (href: string) => {
    const res = await fetch(href, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as Json };
  };
  for (const g of ['staff', 'ldap-readers']) {
    await cli(s.dataDir, ['group', 'create', g]);
    await cli(s.dataDir, ['group', 'add', g, 'admin@example.com']);
  }

  const list = await get(`${s.url}/scim/v2/Users?filter=${encodeURIComponent('userName eq "admin"')}`);
  const admin = list.body.Resources[0];
  t.same(admin.groups.map((g: Json) => g.display).sort(), ['ldap-readers', 'staff'], 'only groups that are SCIM Groups');
  for (const resource of [admin, (await get(`${s.url}/scim/v2/Users/${admin.id}`)).body]) {
    for (const g of resource.groups) {
      const linked = await get(g.$ref);
      t.equal(linked.status, 200, `${g.display}: ${g.$ref} answers`);
      t.equal(linked.body.id, g.value, 'the group it names');
    }
  }
  const groups = await get(`${s.url}/scim/v2/Groups`);
  t.notOk(
    groups.body.Resources.some((g: Json) => ['administrators', 'users'].includes(g.displayName)),
    'no built-in group is a SCIM Group',
  );

  // LDAP (OpenLDAP's ldapsearch): the built-in groups are managed groups there, as in every app.
  const found = await ldapTool('ldapsearch', ['-x', '-H', url, '-D', person('admin'), '-w', PASSWORD, '-b', BASE, '(uid=admin)', 'memberOf']);
  t.equal(found.code, 0, found.err);
  const memberOf = ldif(found.out).get(person('admin'))?.get('memberOf') ?? [];
  t.same(
    [...memberOf].sort(),
    ['administrators', 'ldap-readers', 'staff', 'users'].map((g) => `cn=${g},ou=groups,${BASE}`).sort(),
    'LDAP memberOf: the built-in groups too',
  );
});

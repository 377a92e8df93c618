// The PostgreSQL pass of the test suite: the tests that open a store, again with
// GATEHOUSE_TEST_STORE=postgres, each test in its own database (a copy of one migrated once per
// run, gh_tpl_<fingerprint of the migrations>: test/helpers/pg.ts), on GATEHOUSE_TEST_PG or
// postgres://postgres@127.0.0.1:5432/test. Left out: pure unit tests (no store), the packaged
// executable's tests (test/e2e: they start it on its default SQLite store), and test/pg (the
// multi-instance tests, which run on PostgreSQL in the first pass already), and the few files
// whose subject is a wire protocol or a page's look rather than the store (SAME_IN_BOTH: they
// read and write through the same store calls other files prove on PostgreSQL). Files named on the
// command line run instead of that selection. When the server is not reachable, says so and runs
// nothing (exit 0): SQLite stays the default.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';

process.chdir(path.join(path.dirname(new URL(import.meta.url).pathname), '..'));

const SAME_IN_BOTH = new Set([
  'test/pages/browser.test.ts', // screenshots of every page
  'test/ldap/fuzz.test.ts', // damaged BER on the wire
  'test/ldap/hostile.test.ts', // floods and malformed LDAP messages
  'test/ldap/tls.test.ts', // LDAPS and StartTLS handshakes
  'test/scim/console.test.ts', // the console's SCIM page in a browser (its writes: test/scim/*.test.ts on both)
  'test/security/fuzz.test.ts', // seeded random HTTP input against the parsers
  'test/ldap/apache.test.ts', // Apache's mod_authnz_ldap and mod_oauth2 on the wire
  'test/saml/mellon.test.ts', // Apache's mod_auth_mellon on the wire (test/pg/saml-instances.test.ts: SAML on PostgreSQL)
  'test/forward/proxies.test.ts', // nginx and Caddy on the wire (test/pg/forward-instances.test.ts: forward auth on PostgreSQL)
  'test/oidc/apache-recipe.test.ts', // docs/oidc-apps.md's Apache recipe as written (test/oidc/apache-backchannel.test.ts runs on both)
  'test/oidc/node-app-recipe.test.ts', // docs/oidc-apps.md's Node app as written (test/oidc/backchannel.test.ts runs on both, two instances)
  'test/saml/mellon-step-up.test.ts', // docs/saml.md's mellon step-up block on the wire (test/saml/step-up.test.ts runs on both)
  'test/admin/console.test.ts', // the console's pages in a browser (their writes: the shell's and the record API's tests on both)
  'test/admin/nested-groups.test.ts', // the group page's nesting forms in a browser (test/cli/nested-groups.test.ts runs on both)
  'test/admin/config-managed.test.ts', // the console's labels in a browser (test/cli/config-*.test.ts run on both)
  'test/deliveries/console.test.ts', // the webhooks page in a browser (test/deliveries/webhooks.test.ts runs on both)
  'test/ldap/third-review.test.ts', // LDAP sockets: slots, StartTLS, pipelining (test/ldap/nested-groups.test.ts reads the store on both)
  'test/pages/confirm.test.ts', // "Confirm it is you" in a browser (test/accounts/recent-signin.test.ts runs on both)
  'test/pages/layout.test.ts', // the pages' layout in a browser
  'test/passkeys/pages.test.ts', // passkeys through Chromium's WebAuthn on the pages (test/passkeys/api.test.ts runs on both)
  'test/saml/console.test.ts', // the console's SAML screen in a browser (test/saml/sso.test.ts runs on both)
  'test/saml/step-up-browser.test.ts', // SAML step-up as people meet it in a browser (test/saml/step-up.test.ts runs on both)
  'test/admin/clients-strength.test.ts', // the console's client settings in a browser (test/oidc/backchannel.test.ts runs on both)
]);
const STORE_HELPERS = /from '\.\.\/helpers\/(server|cli|oidc|db|passkeys|proxies)'|GATEHOUSE_TEST_STORE|storeFlags/;
function storeTests() {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!['test/e2e', 'test/pg', 'test/helpers'].includes(file)) walk(file);
      } else if (e.name.endsWith('.test.ts') && !SAME_IN_BOTH.has(file) && STORE_HELPERS.test(fs.readFileSync(file, 'utf8'))) found.push(file);
    }
  };
  walk('test');
  return found;
}

const url = process.env.GATEHOUSE_TEST_PG || 'postgres://postgres@127.0.0.1:5432/test';
const shown = url.replace(/\/\/[^@]*@/, '//…@');
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
try {
  await client.connect();
  await client.query('SELECT 1');
  await client.end();
} catch (err) {
  console.log(`# PostgreSQL is not reachable at ${shown} (${err.code ?? err.message}): the PostgreSQL pass did not run`);
  process.exit(0);
}
console.log(`# PostgreSQL pass on ${shown}`);
const given = process.argv.slice(2);
const files = given.some((a) => !a.startsWith('-')) ? [] : storeTests();
console.log(`# ${files.length ? `${files.length} test files that open a store` : 'the files given'}`);
const r = spawnSync(process.execPath, [path.join('node_modules', 'tap', 'dist', 'esm', 'run.mjs'), ...given, ...files], {
  stdio: 'inherit',
  env: { ...process.env, GATEHOUSE_TEST_STORE: 'postgres' },
});
process.exit(r.status ?? 1);

// The layers stay as docs/architecture.md draws them. One list of forbidden edges (the same list
// the document shows), checked against every import of every file under src/, and no import
// cycle. (ESLint checks some of the same while editing; this keeps all of it true in every run.)
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

const ROOT = path.join(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');

function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

const code = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:])\/\/.*$/gm, '$1');

/**
 * A file's imports as the TypeScript compiler reads them (not regular expressions): static
 * imports and re-exports (type-only ones included: a type edge is still an edge), and, apart,
 * lazy import() calls.
 */
function importsOf(file: string): { static: string[]; lazy: string[] } {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const found = { static: [] as string[], lazy: [] as string[] };
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.static.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.lazy.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
const imports = (file: string) => {
  const i = importsOf(file);
  return [...i.static, ...i.lazy];
};
const rel = (file: string) => path.relative(SRC, file).split(path.sep).join('/');
/** A relative import as a path under src/ without extension ("store/accounts"), or the package name. */
function target(file: string, spec: string): { local: string | null; pkg: string | null } {
  if (!spec.startsWith('.')) return { local: null, pkg: spec.startsWith('node:') ? null : spec };
  const r = path
    .relative(SRC, path.resolve(path.dirname(file), spec))
    .split(path.sep)
    .join('/');
  return { local: r.replace(/\.(ts|js)$/, ''), pkg: null };
}

/** Every folder of src/ with an operations.ts is a domain, read from the tree (a new one is covered at once). */
const DOMAINS = fs
  .readdirSync(SRC, { withFileTypes: true })
  .filter((e) => e.isDirectory() && fs.existsSync(path.join(SRC, e.name, 'operations.ts')))
  .map((e) => e.name);

/**
 * Forbidden edges: modules matching `from` may not import what matches `to`: a module under src/
 * ("store/accounts", no extension) or, written "pkg:name", a package. `except` names the
 * allowed targets of a wide rule.
 */
interface Rule {
  from: RegExp;
  to: RegExp;
  except?: RegExp;
  why: string;
}
const FORBIDDEN: readonly Rule[] = [
  { from: /^(?!store\/)/, to: /^pkg:knex$/, why: 'only src/store knows knex' },
  { from: /^(?!http\/)/, to: /^pkg:(koa|@koa\/.*|koa-.*|oidc-provider)$/, why: 'koa and oidc-provider live in src/http' },
  { from: /^(?!cli\/)/, to: /^pkg:commander$/, why: 'commander lives in src/cli' },
  {
    from: /^(http|cli|ldap)\//,
    to: /^(?!pkg:|http\/|cli\/|ldap\/)/,
    except: /^(core|errors|config|log)$/,
    why: 'front ends reach the domain through the core only',
  },
  { from: /^http\//, to: /^(cli|ldap)\//, why: 'front ends do not import each other' },
  { from: /^(?!serve$)/, to: /^(ldap\/server|http\/server)$/, why: 'serve (the composition root) alone starts the listeners' },
  { from: /^ldap\//, to: /^(http|cli)\//, why: 'the LDAP front end is a room of its own' },
  {
    from: /^(?!ldap\/|sources\/directory-client)/,
    to: /^pkg:ldapts$/,
    why: "LDAP's BER codecs (ldapts) live in src/ldap, its client in src/sources/directory-client.ts",
  },
  { from: /^cli\//, to: /^(http\/|serve$)/, why: 'the CLI starts the server through serve(), handed to it by bin/' },
  {
    from: /^auth\//,
    to: /^(?!pkg:|auth\/)/,
    except: /^(errors|clock|native\/load)$/,
    why: 'src/auth holds crypto only (passwords, tokens, TOTP, key material)',
  },
  { from: /^permission\//, to: /^(?!pkg:|permission\/)/, except: /^(errors|actor)$/, why: 'the permission model is pure' },
  {
    from: /^(runtime\/|services$)/,
    to: /^(?!pkg:|runtime\/)/,
    except: /^(errors|clock|config|config\/.*|log|store\/.*|auth\/.*|mail\/.*|i18n|tasks|audit)$/,
    why: 'the services the use cases are handed (src/runtime, services.ts) stand below every domain',
  },
  {
    from: /^store\//,
    to: /^(?!pkg:|store\/)/,
    except: /^(errors|clock|config|log|permission\/.*|native\/.*|\.\.\/migrations\/.*)$/,
    why: 'the store knows no domain',
  },
  {
    from: /^managed\//,
    to: /^(?!pkg:|managed\/)/,
    except: /^(errors|actor|store\/.*)$/,
    why: 'who manages an object (a configuration file, a directory source) is one guard below every domain',
  },
  { from: /^(?!core$|http\/|cli\/|ldap\/|serve$)/, to: /^core$/, why: 'only front ends (and serve, which starts them) import the core' },
  // core-vocabulary.ts is the core's list of re-exported types: part of the core.
  { from: /^(?!core(-vocabulary)?$)/, to: new RegExp(`^((${DOMAINS.join('|')})/operations|operator)$`), why: 'only the core combines the domains' },
  { from: /^(errors|clock|log|config)$|^config\//, to: /^(?!pkg:|(errors|clock|log|config)$|config\/)/, why: 'the leaves import nothing of ours' },
];

const forbids = (rule: Rule, from: string, to: string) => rule.from.test(from) && rule.to.test(to) && !rule.except?.test(to);

function violations(): string[] {
  const out: string[] = [];
  for (const file of files(SRC)) {
    const from = rel(file).replace(/\.ts$/, '');
    for (const spec of imports(file)) {
      const { local, pkg } = target(file, spec);
      const to =
        local ??
        (pkg === null
          ? null
          : `pkg:${pkg
              .split('/')
              .slice(0, pkg.startsWith('@') ? 2 : 1)
              .join('/')}`);
      if (to === null) continue;
      for (const rule of FORBIDDEN) if (forbids(rule, from, to)) out.push(`${from} → ${to}: ${rule.why}`);
    }
  }
  return out;
}

t.test('no forbidden edge', async (t) => {
  t.same(violations(), []);
});

t.test('the rules catch what they are for', async (t) => {
  // A rule that matches nothing guards nothing: each forbidden edge, tried on a made-up import.
  const tries: Array<[string, string]> = [
    ['http/routes', 'pkg:knex'],
    ['records/service', 'pkg:koa'],
    ['http/routes', 'store/accounts'],
    ['auth/tokens', 'store/keys'],
    ['store/accounts', 'accounts/create'],
    ['accounts/create', 'core'],
    ['managed/managed-by', 'config-file/apply'],
  ];
  for (const [from, to] of tries)
    t.ok(
      FORBIDDEN.some((r) => forbids(r, from, to)),
      `${from} → ${to} is forbidden`,
    );
});

t.test('no import cycle under src', async (t) => {
  const graph = new Map<string, string[]>();
  for (const file of files(SRC)) {
    // Lazy import() calls are left out: they run after every module has loaded.
    const specs = importsOf(file).static.filter((s) => s.startsWith('.'));
    graph.set(
      rel(file).replace(/\.ts$/, ''),
      specs.map((s) => target(file, s).local!),
    );
  }
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (n: string, trail: string[]) => {
    if (state.get(n) === 'done') return;
    if (state.get(n) === 'open') {
      cycles.push([...trail.slice(trail.indexOf(n)), n].join(' → '));
      return;
    }
    state.set(n, 'open');
    for (const m of graph.get(n) ?? []) if (graph.has(m)) visit(m, [...trail, n]);
    state.set(n, 'done');
  };
  for (const n of graph.keys()) visit(n, []);
  t.same(cycles, []);
});

/** Folders depend one way: no cycle between src/'s folders (top-level files such as services.ts aside). */
function folderCycles(): string[][] {
  const folderOf = (f: string) => rel(f).split('/')[0];
  const graph = new Map<string, Set<string>>();
  for (const file of files(SRC)) {
    if (!rel(file).includes('/')) continue; // top-level files (services, core, errors…) are not folders
    for (const spec of importsOf(file).static) {
      const local = target(file, spec).local;
      if (local === null || !local.includes('/')) continue;
      const [a, b] = [folderOf(file), local.split('/')[0]];
      if (a !== b) graph.set(a, (graph.get(a) ?? new Set()).add(b));
    }
  }
  // Tarjan's strongly connected components: each with more than one folder is a cycle.
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) connect(v);
  return out;
}

t.test('no cycle between folders', async (t) => {
  t.same(
    folderCycles().map((c) => c.join(' ⇄ ')),
    [],
  );
});

t.test('every domain folder is covered by the rules', async (t) => {
  for (const d of ['accounts', 'passkeys', 'invitations', 'upstream', 'apps', 'groups']) t.ok(DOMAINS.includes(d), `${d} is a domain`);
  t.ok(
    FORBIDDEN.some((r) => forbids(r, 'http/routes', 'passkeys/operations')),
    'a front end reaching a domain past the core is refused',
  );
  t.ok(
    FORBIDDEN.some((r) => forbids(r, 'accounts/create', 'upstream/operations')),
    'a domain combining another domain is refused',
  );
});

t.test('errors.ts holds no HTTP status', async (t) => {
  t.notMatch(code(path.join(SRC, 'errors.ts')), /\b[1-5]\d\d\b/);
});

t.test('docs/architecture.md shows the same rules', async (t) => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  for (const rule of FORBIDDEN) t.ok(doc.includes(rule.why), `docs/architecture.md says: ${rule.why}`);
});

t.test('issue 46: audit event names are one typed list, each in use', async (t) => {
  const { AUDIT_EVENTS } = await import('../../src/audit-events');
  const text = files(SRC)
    .filter((f) => !f.endsWith('audit-events.ts'))
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
  for (const name of AUDIT_EVENTS) {
    // Named as a literal, or made by the named credentials' template (`${kind}_added`).
    const used =
      text.includes(`'${name}'`) || (/^(app_password|api_key)_(added|revoked)$/.test(name) && text.includes(`\${kind.event}_${name.split('_').pop()}`));
    t.ok(used, `${name} is recorded somewhere`);
  }
  t.same(
    [...text.matchAll(/audit\.record\(\s*'([a-z_]+)'/g)].map((m) => m[1]).filter((n) => !(AUDIT_EVENTS as readonly string[]).includes(n)),
    [],
    'no event recorded outside the list (the compiler checks it too)',
  );
});

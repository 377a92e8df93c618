// Issue 73: `forbidden` stood for some thirty different refusals. Each now names its rule from one
// catalogue (errors.ts REASONS), carried by the error and shown beside `code` in the HTTP bodies
// and in the shell's --json errors; docs/http-api.md lists the same reasons. (test/http/reasons.test.ts
// meets them on real requests and commands.)
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { AppError, REASONS, denied, reworded, type Reason } from '../../src/errors';
import { errorBody } from '../../src/http/errors';
import { errorLine } from '../../src/cli/output';

const ROOT = path.join(__dirname, '..', '..');
const ALL = Object.keys(REASONS) as Reason[];
/** The codes that are one rule each: their errors carry their own name as the reason. */
const OWN = ['signup_closed', 'email_unverified', 'reauthentication_required', 'last_administrator', 'last_credential'] as const;

t.test('docs/http-api.md lists every reason, and only those', async (t) => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'http-api.md'), 'utf8');
  const section = doc.slice(doc.indexOf('#### Reasons'), doc.indexOf('### Record API'));
  const listed = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
  t.same([...listed].sort(), [...ALL].sort());
});

t.test('every reason is given somewhere (a reason nobody gives is not a rule)', async (t) => {
  const files = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  const text = files(path.join(ROOT, 'src'))
    .filter((f) => !f.endsWith(`${path.sep}errors.ts`))
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');
  for (const reason of ALL) {
    const given = (OWN as readonly string[]).includes(reason) || text.includes(`'${reason}'`) || (reason === 'not_permitted' && text.includes('denied('));
    t.ok(given, `${reason} is given`);
  }
});

t.test('a forbidden names its reason (the compiler asks for it)', async (t) => {
  // @ts-expect-error: a `forbidden` without a reason does not compile.
  const bare = new AppError('forbidden', 'no reason');
  t.equal(bare.code, 'forbidden');
  t.equal(new AppError('forbidden', 'x', { reason: 'system_group' }).reason, 'system_group');
  t.equal(denied(false, 'do this').reason, 'not_permitted', 'a permission refusal');
  t.equal(denied(false, 'do this', 'administrators_only').reason, 'administrators_only');
  t.equal(denied(true, 'do this').code, 'unauthenticated', 'a guest is asked to sign in, no reason');
  for (const code of OWN) t.equal(new AppError(code, 'x').reason, code, `${code} is its own reason`);
  t.equal(new AppError('invalid_input', 'x').reason, undefined, 'other codes have none');
  t.equal(reworded(new AppError('forbidden', 'a', { reason: 'managed_by_file' }), 'line 3: a').reason, 'managed_by_file', 'kept when a message is reworded');
});

t.test('each reason shows beside the code in both HTTP bodies and in the shell’s --json error', async (t) => {
  for (const reason of ALL) {
    const err = (OWN as readonly string[]).includes(reason)
      ? new AppError(reason as (typeof OWN)[number], 'refused')
      : new AppError('forbidden', 'refused', { reason });
    const action = errorBody('action', err) as Array<{ Attributes: Record<string, unknown> }>;
    t.match(action[0].Attributes, { code: err.code, reason, message: 'refused', type: 'error', title: 'failed' }, `${reason}: action body`);
    const api = errorBody('jsonapi', err) as { errors: Array<Record<string, unknown>> };
    t.same(
      api.errors[0],
      { status: err.code === 'forbidden' ? '403' : api.errors[0].status, code: err.code, reason, title: 'refused' },
      `${reason}: JSON:API body`,
    );
    t.same(JSON.parse(errorLine(err, true)), { error: { code: err.code, message: 'refused', reason } }, `${reason}: shell --json`);
  }
  // Nothing else changed: an error with no reason has the bodies it always had.
  const plain = new AppError('not_found', 'gone');
  t.same(errorBody('jsonapi', plain), { errors: [{ status: '404', code: 'not_found', title: 'gone' }] });
  t.same((errorBody('action', plain) as Array<{ Attributes: unknown }>)[0].Attributes, { type: 'error', title: 'failed', message: 'gone', code: 'not_found' });
  t.same(JSON.parse(errorLine(plain, true)), { error: { code: 'not_found', message: 'gone' } });
  t.equal(errorLine(new AppError('forbidden', 'use {--force}', { reason: 'not_permitted' }), false), 'gatehouse: use --force\n', 'the text line is as before');
});

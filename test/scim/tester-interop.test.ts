// python-scim's conformance tester (scim2-tester, run as `scim2 … test`) against /scim/v2, its
// requests written again here: the tester is not on the registries these machines reach. Like the
// tester, the test reads Gatehouse's /ResourceTypes and /Schemas, builds its models from them, and
// fills them as the tester's fillers do: a canonical value picked at random (so a Group member's
// `type` says User or Group whatever the member is), a reference made by creating the resource it
// names and taking its meta.location, a member's value set from its $ref's last segment, an email
// for emails.value, a random UUID for any other string, a random boolean. Then the checks it runs
// for Users and Groups: create, read, list, attributes and excludedAttributes on GET, list and
// .search, PUT, DELETE, and PATCH add, remove and replace of every attribute it may write, each
// answer read as its client reads one (only declared attributes, application/scim+json). Each
// round runs every check with another seeded filling, so every random choice comes up.
//
// Issue 71: since nested groups, a member labelled Group whose value and $ref name a User was
// refused (`no Group …`), 1 to 4 of the tester's checks at random. A member's type is a label
// (RFC 7643 section 4.2); its value and $ref decide what it is.
import t from 'tap';
import { cli } from '../helpers/cli';
import { type TestServer, withAdmin } from '../helpers/server';

type Json = Record<string, any>;
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
/** The fillings each round uses: the same requests on every run. */
const SEEDS = [1, 2, 3, 4, 5, 6];

interface Answer {
  status: number;
  type: string;
  body: Json;
}
type Http = (method: string, path: string, body?: unknown) => Promise<Answer>;

async function scimClient(s: TestServer): Promise<Http> {
  const made = await cli(s.dataDir, ['--json', 'scim', 'token', 'add', '--name', 'scim2-tester']);
  const token: string = made.json.token;
  return async (method, path, body) => {
    const res = await fetch(`${s.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, type: res.headers.get('content-type') ?? '', body: (text ? JSON.parse(text) : null) as Json };
  };
}

/** mulberry32: a small seeded generator, so a round's filling is the same on every run. */
function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), a | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const hex = (n: number) => Array.from({ length: n }, () => int(16).toString(16)).join('');
  return {
    int,
    choice: <T>(list: readonly T[]): T => list[int(list.length)],
    // A version 4 UUID, as the tester's uuid.uuid4() makes them.
    uuid: () => `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[int(4)]}${hex(3)}-${hex(12)}`,
  };
}
type Random = ReturnType<typeof seeded>;

/** An attribute as /Schemas declares it. */
interface Attr {
  name: string;
  type: string;
  multiValued: boolean;
  required: boolean;
  mutability: string;
  returned: string;
  canonicalValues?: string[];
  referenceTypes?: string[];
  subAttributes?: Attr[];
}

/** A resource type with its schema, as the tester's client builds a model from them. */
interface Model {
  name: string;
  endpoint: string;
  schema: string;
  attributes: Attr[];
}

const WRITABLE = ['readWrite', 'writeOnly', 'immutable'];
/** Which attributes a filling writes: by mutability (writable ones when not given) and by required. */
interface Only {
  mutability?: string[];
  required?: boolean[];
}

/** The models from the server's own discovery documents. */
async function discover(http: Http): Promise<Map<string, Model>> {
  const types = (await http('GET', '/ResourceTypes')).body.Resources as Json[];
  const schemas = (await http('GET', '/Schemas')).body.Resources as Json[];
  const models = new Map<string, Model>();
  for (const rt of types) {
    const declared = schemas.find((s) => s.id === rt.schema)!.attributes as Attr[];
    // The tester's models inherit externalId from its Resource class: first, before the schema's own.
    const externalId = declared.find((a) => a.name === 'externalId') ?? {
      ...{ name: 'externalId', type: 'string', multiValued: false, required: false },
      ...{ mutability: 'readWrite', returned: 'default' },
    };
    models.set(rt.name, { name: rt.name, endpoint: rt.endpoint, schema: rt.schema, attributes: [externalId, ...declared.filter((a) => a !== externalId)] });
  }
  return models;
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);
/** What a member's $ref names: …/Users/<id> is a User, …/Groups/<id> a Group. */
const kindOf = (ref: unknown) => (typeof ref === 'string' ? /\/(Users|Groups)\/[^/]+$/.exec(ref)?.[1]?.replace(/s$/, '') : undefined);

/** The attribute's value as the tester compares two (pydantic equality): declared sub-attributes only, absent as null. */
function comparable(attr: Attr, value: unknown, without: string[] = []): unknown {
  if (value === undefined || value === null) return null;
  if (attr.multiValued && Array.isArray(value)) return value.map((v) => comparable({ ...attr, multiValued: false }, v, without));
  if (attr.type !== 'complex') return value;
  const v = value as Json;
  return Object.fromEntries((attr.subAttributes ?? []).filter((s) => !without.includes(s.name)).map((s) => [s.name, v[s.name] ?? null]));
}

/** One check's outcome, as the tester prints it. */
interface Result {
  check: string;
  ok: boolean;
  reason: string;
}

/**
 * The tester's client and fillers for one round: every resource a check makes is deleted after
 * the check, newest first, as its ResourceManager does.
 */
class Tester {
  private made: Array<{ model: Model; id: string }> = [];
  /** Members sent, by whether their type label says what their $ref names. */
  readonly labels = { matching: 0, mislabelled: 0 };

  constructor(
    private readonly http: Http,
    readonly models: Map<string, Model>,
    private readonly random: Random,
  ) {}

  /** A request sent as it is, its answer unread (the tester's methods check uses its HTTP client directly). */
  raw(method: string, path: string): Promise<Answer> {
    return this.http(method, path);
  }

  /** A request as the tester's client sends it; an answer read as its client reads one. */
  async send(method: string, path: string, body?: Json): Promise<Answer> {
    this.countLabels(body);
    const answer = await this.http(method, path, body);
    if (answer.status !== 204 && !/^application\/(scim\+)?json/.test(answer.type)) throw new Error(`${method} ${path}: answered ${answer.type}`);
    return answer;
  }

  private countLabels(value: unknown): void {
    if (Array.isArray(value)) return value.forEach((v) => this.countLabels(v));
    if (value === null || typeof value !== 'object') return;
    const v = value as Json;
    if (typeof v.$ref === 'string' && typeof v.type === 'string') this.labels[kindOf(v.$ref) === v.type ? 'matching' : 'mislabelled']++;
    Object.values(v).forEach((x) => this.countLabels(x));
  }

  /** The tester's generate_random_value: a value for one attribute (a reference creates what it names). */
  async generate(attr: Attr, owner: string, only?: Only): Promise<unknown> {
    if (only?.mutability && !only.mutability.includes(attr.mutability)) return undefined;
    if (only?.required && !only.required.includes(attr.required)) return undefined;
    const r = this.random;
    let value: unknown;
    if (attr.canonicalValues && attr.canonicalValues.length > 0) value = r.choice(attr.canonicalValues);
    else if (attr.name === 'value' && owner.toLowerCase().includes('email')) value = `${r.uuid()}@${r.uuid()}.com`;
    else if (attr.type === 'integer') value = r.int(2 ** 31);
    else if (attr.type === 'boolean') value = r.choice([true, false]);
    else if (attr.type === 'reference') {
      const types = attr.referenceTypes ?? [];
      if (types.length === 0 || types.includes('external') || types.includes('uri')) value = `https://${r.uuid()}.test`;
      else {
        // The first type the reference may name that is not the model holding it: a User for a Group's member.
        const named = this.models.get(types.find((n) => n !== owner) ?? types[0])!;
        value = (await this.createAndRegister(named)).meta.location;
      }
    } else if (attr.type === 'complex') value = await this.fill({}, attr.subAttributes ?? [], pascal(attr.name), only);
    else if (attr.type === 'binary') value = Buffer.from(r.uuid()).toString('base64');
    else value = r.uuid();
    return attr.multiValued ? [value] : value;
  }

  /** The tester's fill_with_random_values over `obj`, then its primary and reference fixes. */
  async fill(obj: Json, attrs: Attr[], owner: string, only: Only = {}): Promise<Json> {
    const o: Only = { mutability: only.mutability ?? WRITABLE, required: only.required };
    const wanted = (a: Attr) => o.mutability!.includes(a.mutability) && (!o.required || o.required.includes(a.required));
    for (const attr of attrs.filter(wanted)) {
      const value = await this.generate(attr, owner, o);
      if (value !== undefined) obj[attr.name] = value;
      // Sub-attributes are paths of their own: each is generated (a reference among them creates
      // its resource), and set only in a single complex value, never in a list's items.
      for (const sub of attr.type === 'complex' ? (attr.subAttributes ?? []).filter(wanted) : []) {
        const v = await this.generate(sub, pascal(attr.name), o);
        if (v === undefined) continue;
        obj[attr.name] ??= {};
        if (!Array.isArray(obj[attr.name])) obj[attr.name][sub.name] = v;
      }
    }
    for (const attr of attrs) {
      const list = obj[attr.name];
      if (!attr.multiValued || !Array.isArray(list) || list.length === 0 || !attr.subAttributes?.some((s) => s.name === 'primary')) continue;
      const primary = this.random.int(list.length);
      list.forEach((item: Json, i: number) => (item.primary = i === primary));
    }
    fixReferences(obj);
    return obj;
  }

  /** A body for POST or PUT: readOnly attributes are not sent. */
  body(model: Model, obj: Json): Json {
    return { schemas: [model.schema], ...writable(model.attributes, obj) };
  }

  async createAndRegister(model: Model, fillAll = false): Promise<Json> {
    const obj = await this.fill({}, model.attributes, model.name, fillAll ? { mutability: WRITABLE } : { required: [true] });
    const r = await this.send('POST', model.endpoint, this.body(model, obj));
    if (r.status !== 201) throw new Error(`POST ${model.endpoint}: ${r.status} ${JSON.stringify(r.body)}`);
    this.read(model, r.body);
    this.made.push({ model, id: r.body.id });
    return r.body;
  }

  async cleanup(): Promise<void> {
    for (const { model, id } of this.made.reverse()) await this.http('DELETE', `${model.endpoint}/${id}`);
    this.made = [];
  }

  /** An answer as the tester's client validates it against the model (unknown attributes refused). */
  read(model: Model, body: Json): Json {
    if (body?.schemas?.includes(ERROR)) throw new Error(`a SCIM Error: ${body.status} ${body.scimType ?? ''} ${body.detail}`);
    if (!body?.schemas?.includes(model.schema)) throw new Error(`not a ${model.name}: ${JSON.stringify(body?.schemas)}`);
    undeclared(model.attributes, body, ['schemas', 'id', 'meta']);
    return body;
  }

  readList(body: Json, models: Model[]): Json[] {
    if (!body?.schemas?.includes(LIST)) throw new Error(`not a ListResponse: ${JSON.stringify(body).slice(0, 300)}`);
    return ((body.Resources ?? []) as Json[]).map((r) => this.read(models.find((m) => r.schemas?.includes(m.schema)) ?? models[0], r));
  }
}

/** The attributes of `obj` the request may carry (readOnly ones dropped, at every level). */
function writable(attrs: Attr[], obj: Json): Json {
  const out: Json = {};
  for (const attr of attrs) {
    const v = obj[attr.name];
    if (v === undefined || v === null || attr.mutability === 'readOnly') continue;
    const sub = (x: Json) => (attr.type === 'complex' ? writable(attr.subAttributes ?? [], x) : x);
    out[attr.name] = Array.isArray(v) ? v.map(sub) : sub(v);
  }
  return out;
}

/** The tester's fix_reference_values: an object with a $ref takes its value from the $ref's last segment. */
function fixReferences(value: unknown): void {
  if (Array.isArray(value)) return value.forEach(fixReferences);
  if (value === null || typeof value !== 'object') return;
  const v = value as Json;
  if (typeof v.$ref === 'string' && v.$ref !== '') v.value = v.$ref.split('/').pop();
  Object.values(v).forEach(fixReferences);
}

/** Refuses what the schema does not declare, and what it says is never returned (pydantic's extra="forbid"). */
function undeclared(attrs: Attr[], obj: Json, common: string[] = []): void {
  for (const [key, value] of Object.entries(obj)) {
    if (common.includes(key)) continue;
    const attr = attrs.find((a) => a.name.toLowerCase() === key.toLowerCase());
    if (!attr) throw new Error(`the answer carries ${key}, which the schema does not declare`);
    if (attr.returned === 'never') throw new Error(`the answer carries ${key}, which the schema says is never returned`);
    if (attr.type === 'complex' && value !== null) for (const item of Array.isArray(value) ? value : [value]) undeclared(attr.subAttributes ?? [], item);
  }
}

type Check = (x: Tester, m: Model) => Promise<Result[]>;
const pass = (check: string, reason = ''): Result => ({ check, ok: true, reason });
const fail = (check: string, reason: string): Result => ({ check, ok: false, reason });

/** Two attributes the attribute checks ask for and leave out: returned by default, not readOnly, not required. */
function pickAttributes(m: Model): [string | undefined, string | undefined] {
  const candidates = m.attributes.filter((a) => a.returned === 'default' && a.mutability !== 'readOnly' && !a.required).map((a) => a.name);
  return [candidates[0], candidates[1]];
}

/** GET, list or .search with `attributes` (the one asked for is there) and `excludedAttributes` (the one left out is not). */
function attributeCheck(name: string, query: (x: Tester, m: Model, id: string, param: Json) => Promise<Json | undefined>): Check {
  return async (x, m) => {
    const [included, excluded] = pickAttributes(m);
    if (!included && !excluded) return [];
    const made = await x.createAndRegister(m, true);
    const results: Result[] = [];
    for (const [param, attr, wanted] of [
      ['attributes', included, true],
      ['excludedAttributes', excluded, false],
    ] as const) {
      if (!attr) continue;
      const found = await query(x, m, made.id, { [param]: attr });
      if (!found) results.push(fail(name, `${param}=${attr}: the ${m.name} made is not in the answer`));
      else if ((found[attr] !== undefined) !== wanted) results.push(fail(name, `${param}=${attr}: ${attr} is ${wanted ? 'missing' : 'still there'}`));
      else results.push(pass(name));
    }
    return results;
  };
}

const qs = (param: Json) => new URLSearchParams(param).toString();

/**
 * The answer compared with what was sent, as the tester compares them, but for a member's type:
 * Gatehouse answers what the member is (its $ref's type), not the label sent with it. The tester
 * compares the label too, so a label it picked that disagrees with the member's $ref counts there.
 */
function differs(attr: Attr, sent: unknown, answered: unknown): string | undefined {
  let without: string[] = [];
  if (attr.name === 'members') {
    const truth = ((sent ?? []) as Json[]).map((m) => kindOf(m.$ref));
    const types = ((answered ?? []) as Json[]).map((m) => m.type);
    if (JSON.stringify(types) !== JSON.stringify(truth)) return `members answered as ${types}, their $refs name ${truth}`;
    without = ['type'];
  }
  const [a, b] = [JSON.stringify(comparable(attr, sent, without)), JSON.stringify(comparable(attr, answered, without))];
  return a === b ? undefined : `sent ${a}, answered ${b}`;
}

/** PATCH add or replace of each attribute the tester may write, compared in the PATCH's answer and a GET after. */
function patchCheck(name: string, op: 'add' | 'replace', paths: (m: Model) => Attr[]): Check {
  return async (x, m) => {
    const results: Result[] = [];
    const base = await x.createAndRegister(m);
    for (const attr of paths(m)) {
      const value = await x.generate(attr, m.name);
      const r = await x.send('PATCH', `${m.endpoint}/${base.id}`, { schemas: [PATCH_OP], Operations: [{ op, path: attr.name, value }] });
      if (r.status !== 200 && r.status !== 204) {
        results.push(fail(name, `${op} ${attr.name}: ${r.status} ${r.body?.scimType ?? ''} ${r.body?.detail ?? ''}`));
        continue;
      }
      const answered = r.status === 200 ? differs(attr, value, x.read(m, r.body)[attr.name]) : undefined;
      const after = differs(attr, value, x.read(m, (await x.send('GET', `${m.endpoint}/${base.id}`)).body)[attr.name]);
      results.push(answered || after ? fail(name, `${op} ${attr.name}: ${answered ?? after}`) : pass(name));
    }
    return results;
  };
}

const CHECKS: Array<[string, Check]> = [
  ['object_creation', async (x, m) => [pass('object_creation', (await x.createAndRegister(m)).id)]],
  [
    'object_query',
    async (x, m) => {
      const made = await x.createAndRegister(m);
      const r = await x.send('GET', `${m.endpoint}/${made.id}`);
      return [r.status === 200 && x.read(m, r.body).id === made.id ? pass('object_query') : fail('object_query', `${r.status}`)];
    },
  ],
  [
    'object_query_without_id',
    async (x, m) => {
      const made = await x.createAndRegister(m);
      const r = await x.send('GET', m.endpoint);
      const found = r.status === 200 && x.readList(r.body, [m]).some((u) => u.id === made.id);
      return [found ? pass('object_query_without_id') : fail('object_query_without_id', `${r.status}: not listed`)];
    },
  ],
  [
    'object_query_with_attributes',
    attributeCheck('object_query_with_attributes', async (x, m, id, p) => x.read(m, (await x.send('GET', `${m.endpoint}/${id}?${qs(p)}`)).body)),
  ],
  [
    'object_list_with_attributes',
    attributeCheck('object_list_with_attributes', async (x, m, id, p) =>
      x.readList((await x.send('GET', `${m.endpoint}?${qs(p)}`)).body, [m]).find((r) => r.id === id),
    ),
  ],
  [
    'search_with_attributes',
    attributeCheck('search_with_attributes', async (x, m, id, p) => {
      const body = { schemas: [SEARCH], ...Object.fromEntries(Object.entries(p).map(([k, v]) => [k, [v]])) };
      return x.readList((await x.send('POST', '/.search', body)).body, [...x.models.values()]).find((r) => r.id === id);
    }),
  ],
  [
    'object_replacement',
    async (x, m) => {
      const made = await x.createAndRegister(m);
      // The resource as created, every writable attribute filled again.
      const changed = await x.fill(structuredClone(made), m.attributes, m.name, { mutability: WRITABLE });
      const r = await x.send('PUT', `${m.endpoint}/${made.id}`, x.body(m, changed));
      if (r.status !== 200) return [fail('object_replacement', `${r.status} ${r.body?.scimType ?? ''} ${r.body?.detail ?? ''}`)];
      x.read(m, r.body);
      return [pass('object_replacement')];
    },
  ],
  [
    'object_deletion',
    async (x, m) => {
      const made = await x.createAndRegister(m);
      const gone = await x.send('DELETE', `${m.endpoint}/${made.id}`);
      const after = await x.send('GET', `${m.endpoint}/${made.id}`);
      return [
        gone.status === 204 && after.status === 404 ? pass('object_deletion') : fail('object_deletion', `DELETE ${gone.status}, then GET ${after.status}`),
      ];
    },
  ],
  ['check_add_attribute', patchCheck('check_add_attribute', 'add', (m) => m.attributes.filter((a) => !a.required && WRITABLE.includes(a.mutability)))],
  [
    'check_remove_attribute',
    async (x, m) => {
      const results: Result[] = [];
      const full = await x.createAndRegister(m, true);
      for (const attr of m.attributes.filter((a) => !a.required && ['readWrite', 'writeOnly'].includes(a.mutability))) {
        if (full[attr.name] === undefined) continue;
        const r = await x.send('PATCH', `${m.endpoint}/${full.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: attr.name }] });
        if (r.status !== 200 && r.status !== 204) {
          results.push(fail('check_remove_attribute', `remove ${attr.name}: ${r.status} ${r.body?.detail ?? ''}`));
          continue;
        }
        const after = x.read(m, (await x.send('GET', `${m.endpoint}/${full.id}`)).body);
        const left = (r.status === 200 && x.read(m, r.body)[attr.name] !== undefined) || after[attr.name] !== undefined;
        results.push(left ? fail('check_remove_attribute', `${attr.name} was not removed`) : pass('check_remove_attribute'));
      }
      return results;
    },
  ],
  [
    'check_replace_attribute',
    patchCheck('check_replace_attribute', 'replace', (m) => m.attributes.filter((a) => ['readWrite', 'writeOnly'].includes(a.mutability))),
  ],
];

/** The discovery checks and the random URL, for the count: they do not depend on the filling. */
async function discoveryChecks(x: Tester, random: Random): Promise<Result[]> {
  const results: Result[] = [];
  const expect = async (check: string, method: string, path: string, status: number) => {
    // As the tester asks: no body; its methods check reads the status alone.
    const r = method === 'GET' ? await x.send(method, path) : await x.raw(method, path);
    const error = status === 404 ? r.body?.schemas?.includes(ERROR) : true;
    results.push(r.status === status && error ? pass(check) : fail(check, `${method} ${path}: ${r.status}`));
    return r.body;
  };
  await expect('service_provider_config_endpoint', 'GET', '/ServiceProviderConfig', 200);
  for (const path of ['/ServiceProviderConfig', '/ResourceTypes', '/Schemas']) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) await expect(`methods ${path}`, method, path, 405);
  }
  const types = await expect('query_all_resource_types', 'GET', '/ResourceTypes', 200);
  for (const rt of types.Resources as Json[]) {
    await expect('query_resource_type_by_id', 'GET', `/ResourceTypes/${rt.id}`, 200);
    await expect('resource_types_schema_validation', 'GET', `/Schemas/${rt.schema}`, 200);
  }
  await expect('access_invalid_resource_type', 'GET', `/ResourceTypes/${random.uuid()}`, 404);
  const schemas = await expect('query_all_schemas', 'GET', '/Schemas', 200);
  for (const schema of schemas.Resources as Json[]) await expect('access_schema_by_id', 'GET', `/Schemas/${schema.id}`, 200);
  await expect('access_invalid_schema', 'GET', `/Schemas/${random.uuid()}`, 404);
  await expect('random_url', 'GET', `/${random.uuid()}`, 404);
  return results;
}

t.test("issue 71: every check of python-scim's tester, with seeded fillings, for Users and Groups", async (t) => {
  const s = await withAdmin(t);
  const http = await scimClient(s);
  const models = await discover(http);
  t.same([...models.keys()], ['User', 'Group']);
  const labels = { matching: 0, mislabelled: 0 };
  for (const seed of SEEDS) {
    const random = seeded(seed);
    const x = new Tester(http, models, random);
    const results = await discoveryChecks(x, random);
    for (const model of models.values()) {
      for (const [name, check] of CHECKS) {
        try {
          results.push(...(await check(x, model)).map((r) => ({ ...r, check: `${model.name} ${r.check}` })));
        } catch (err) {
          // As the tester's checker does: an exception is the check's one failure.
          results.push(fail(`${model.name} ${name}`, (err as Error).message));
        } finally {
          await x.cleanup();
        }
      }
    }
    t.same(
      results.filter((r) => !r.ok).map((r) => `${r.check}: ${r.reason}`),
      [],
      `filling ${seed}: all ${results.length} checks pass`,
    );
    labels.matching += x.labels.matching;
    labels.mislabelled += x.labels.mislabelled;
  }
  // The fillings did send what the issue is about: members labelled Group whose $ref is a User.
  t.ok(labels.mislabelled > 0 && labels.matching > 0, `members sent with a label that disagrees with their $ref: ${JSON.stringify(labels)}`);
  const left = (await http('GET', '/Groups')).body.totalResults;
  t.equal(left, 0, "every check's resources deleted after it");
});

t.test('issue 71: a member is what its value and $ref name, in POST, PUT and every PATCH form; its type is a label', async (t) => {
  const s = await withAdmin(t);
  const http = await scimClient(s);
  const made = async (path: string, body: Json) => {
    const r = await http('POST', path, body);
    if (r.status !== 201) throw new Error(`${path}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const ada = await made('/Users', { schemas: [USER], userName: 'ada', emails: [{ value: 'ada@example.com' }] });
  const bob = await made('/Users', { schemas: [USER], userName: 'bob', emails: [{ value: 'bob@example.com' }] });
  const inner = await made('/Groups', { schemas: [GROUP], displayName: 'inner' });
  // The label the tester may pick: Group for a User, and the converse.
  const labelledGroup = (u: Json) => ({ value: u.id, $ref: u.meta.location, type: 'Group' });
  const labelledUser = (g: Json) => ({ value: g.id, $ref: g.meta.location, type: 'User' });
  const members = (g: Json) => ((g.members ?? []) as Json[]).map((m) => `${m.type}:${m.display ?? m.value}`).sort();
  const [ADA, BOB, INNER] = [`User:${ada.id}`, `User:${bob.id}`, 'Group:inner'];

  const created = await http('POST', '/Groups', { schemas: [GROUP], displayName: 'outer', members: [labelledGroup(ada), labelledUser(inner)] });
  t.equal(created.status, 201, created.status === 201 ? 'POST' : JSON.stringify(created.body));
  t.same(members(created.body), [INNER, ADA].sort(), 'POST: ada is a User, inner a Group, whatever their labels');
  const outer = created.body.id;
  const put = await http('PUT', `/Groups/${outer}`, { schemas: [GROUP], displayName: 'outer', members: [labelledGroup(bob)] });
  t.equal(put.status, 200, put.status === 200 ? 'PUT' : JSON.stringify(put.body));
  t.same(members(put.body), [BOB], 'PUT');

  const patch = (...Operations: Json[]) => http('PATCH', `/Groups/${outer}`, { schemas: [PATCH_OP], Operations });
  const forms: Array<[string, Json[], string[]]> = [
    ['add members', [{ op: 'add', path: 'members', value: [labelledGroup(ada), labelledUser(inner)] }], [BOB, ADA, INNER]],
    ['replace members', [{ op: 'replace', path: 'members', value: [labelledGroup(ada)] }], [ADA]],
    ['add without a path', [{ op: 'add', value: { members: [labelledUser(inner)] } }], [ADA, INNER]],
    ['replace without a path', [{ op: 'replace', value: { members: [labelledGroup(bob), labelledUser(inner)] } }], [BOB, INNER]],
    ['replace members[value eq …]', [{ op: 'replace', path: `members[value eq "${bob.id}"]`, value: labelledGroup(bob) }], [BOB, INNER]],
    ['remove members[value eq …]', [{ op: 'remove', path: `members[value eq "${bob.id}"]` }], [INNER]],
    ['add by $ref alone', [{ op: 'add', path: 'members', value: [{ $ref: ada.meta.location }] }], [ADA, INNER]],
    ['add by a relative $ref', [{ op: 'add', path: 'members', value: [{ value: bob.id, $ref: `Users/${bob.id}`, type: 'Group' }] }], [ADA, BOB, INNER]],
    ['remove members[type eq "User"]: the type answered', [{ op: 'remove', path: 'members[type eq "User"]' }], [INNER]],
    [
      'add, then remove by listing (Entra)',
      [
        { op: 'add', path: 'members', value: [labelledGroup(ada)] },
        { op: 'Remove', path: 'members', value: [labelledUser(inner)] },
      ],
      [ADA],
    ],
  ];
  for (const [form, ops, expected] of forms) {
    const r = await patch(...ops);
    t.equal(r.status, 200, `${form}${r.status === 200 ? '' : `: ${JSON.stringify(r.body)}`}`);
    t.same(members(r.body), expected.sort(), form);
  }
  const adaRead = await http('GET', `/Users/${ada.id}`);
  t.same(
    (adaRead.body.groups as Json[]).map((g) => `${g.display}:${g.type}`),
    ['outer:direct'],
    'ada is in outer as a person, directly',
  );

  // Refused, naming what is wrong; nothing changed.
  const before = (await http('GET', `/Groups/${outer}`)).body;
  const stranger = '0b7f7c0e-55a1-4c5b-9d0e-6f3a2b1c4d5e';
  const refusals: Array<[string, Json, RegExp]> = [
    ['$ref and value name two ids', { value: bob.id, $ref: ada.meta.location }, new RegExp(`\\$ref names the User ${ada.id} but its value is ${bob.id}`)],
    [
      'a User whose $ref names a Group',
      { value: bob.id, $ref: bob.meta.location.replace('/Users/', '/Groups/') },
      new RegExp(`${bob.id} is a User, but its \\$ref names a Group`),
    ],
    [
      'a Group whose $ref names a User',
      { value: inner.id, $ref: inner.meta.location.replace('/Groups/', '/Users/') },
      new RegExp(`${inner.id} is a Group, but its \\$ref names a User`),
    ],
    [
      'a $ref that names no User or Group',
      { value: ada.id, $ref: 'https://elsewhere.example/people/ada' },
      /\$ref must be a URL ending in \/Users\/<id> or \/Groups\/<id>/,
    ],
    ['a $ref to nobody', { $ref: ada.meta.location.replace(ada.id, stranger) }, new RegExp(`no User ${stranger}`)],
    ['an id that is nobody, labelled Group', { value: stranger, type: 'Group' }, new RegExp(`no User or Group ${stranger}`)],
    ['neither value nor $ref', { type: 'User' }, /names no member/],
  ];
  for (const [what, member, message] of refusals) {
    const r = await patch({ op: 'add', path: 'members', value: [member] });
    t.match(r, { status: 400, body: { schemas: [ERROR], scimType: 'invalidValue', detail: message } }, `PATCH: ${what}`);
  }
  const twice = await http('PUT', `/Groups/${outer}`, {
    schemas: [GROUP],
    displayName: 'renamed',
    members: [
      { value: ada.id, $ref: ada.meta.location },
      { value: ada.id, $ref: ada.meta.location.replace('/Users/', '/Groups/') },
    ],
  });
  t.match(twice, { status: 400, body: { scimType: 'invalidValue', detail: /the \$refs name .* both a User and a Group/ } }, 'PUT: one id, two $refs');
  const entra = await patch({ op: 'Remove', path: 'members', value: [{ value: ada.id, $ref: bob.meta.location }] });
  t.match(entra, { status: 400, body: { scimType: 'invalidValue', detail: /\$ref names the User/ } }, 'remove by listing: $ref and value disagree');
  const post = await http('POST', '/Groups', { schemas: [GROUP], displayName: 'never', members: [{ value: bob.id, $ref: ada.meta.location }] });
  t.match(post, { status: 400, body: { scimType: 'invalidValue' } }, 'POST: $ref and value disagree');
  t.equal((await http('GET', `/Groups?filter=${encodeURIComponent('displayName eq "never"')}`)).body.totalResults, 0, 'no group made');
  const after = (await http('GET', `/Groups/${outer}`)).body;
  t.equal(after.meta.version, before.meta.version, 'the group unchanged by every refusal');
  t.same(members(after), [ADA]);
});

// An app's SCIM endpoint for pushes to land on, served by scimmy (an independent SCIM 2.0
// implementation: it parses every request against the RFC 7643 schemas, applies filters and
// answers errors), with the people and groups in memory. node:http routes each request to
// scimmy's User and Group resource types; the handlers keep one store per server (scimmy's
// declarations are process-wide, so the store travels in the request context).
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

type Json = Record<string, any>;
interface Store {
  users: Map<string, Json>;
  groups: Map<string, Json>;
}

let declared: Promise<any> | null = null;

async function scimmy(): Promise<any> {
  declared ??= import('scimmy').then(({ default: SCIMMY }) => {
    const ScimError = SCIMMY.Types.Error as any;
    for (const [Type, key] of [
      [SCIMMY.Resources.User, 'users'],
      [SCIMMY.Resources.Group, 'groups'],
    ] as const) {
      (SCIMMY.Resources.declare(Type) as any)
        .ingress((resource: any, data: any, ctx: Store) => {
          const map = ctx[key];
          const plain = JSON.parse(JSON.stringify(data));
          const unique = key === 'users' ? 'userName' : 'displayName';
          const clash = [...map.values()].find((r) => String(r[unique]).toLowerCase() === String(plain[unique]).toLowerCase() && r.id !== resource.id);
          if (clash) throw new ScimError(409, 'uniqueness', `${unique} is taken`);
          if (resource.id && !map.has(resource.id)) throw new ScimError(404, null, `no ${resource.id}`);
          const now = new Date().toISOString();
          const id = resource.id ?? randomUUID();
          const stored = { ...plain, id, meta: { created: map.get(id)?.meta?.created ?? now, lastModified: now } };
          map.set(id, stored);
          return stored;
        })
        .egress((resource: any, ctx: Store) => {
          const all = [...ctx[key].values()];
          if (resource.id) {
            const one = ctx[key].get(resource.id);
            if (!one) throw new ScimError(404, null, `no ${resource.id}`);
            return one;
          }
          return resource.filter ? resource.filter.match(all) : all;
        })
        .degress((resource: any, ctx: Store) => {
          if (!ctx[key].delete(resource.id)) throw new ScimError(404, null, `no ${resource.id}`);
          // A deleted person leaves every group.
          if (key === 'users') for (const g of ctx.groups.values()) g.members = (g.members ?? []).filter((m: Json) => m.value !== resource.id);
        });
    }
    return SCIMMY;
  });
  return declared;
}

export interface ScimTarget {
  url: string;
  port: number;
  token: string;
  store: Store;
  /** Every request as it came: method and path. */
  requests: string[];
  /** Stops answering (connections refused) until `up`. */
  down(): Promise<void>;
  up(): Promise<void>;
}

export async function startScimTarget(t: Test, o: { port?: number } = {}): Promise<ScimTarget> {
  const SCIMMY = await scimmy();
  const store: Store = { users: new Map(), groups: new Map() };
  const token = `app-token-${randomUUID()}`;
  const requests: string[] = [];
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(`${req.method} ${url.pathname}`);
    const send = (status: number, body?: unknown) => {
      res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/scim+json' });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    try {
      if (req.headers.authorization !== `Bearer ${token}`) return send(401, new SCIMMY.Messages.Error({ status: 401, detail: 'bad token' }));
      const m = /^\/scim\/v2\/(Users|Groups)(?:\/([^/]+))?$/.exec(url.pathname);
      if (!m) return send(404, new SCIMMY.Messages.Error({ status: 404, detail: 'no such endpoint' }));
      const Type = m[1] === 'Users' ? SCIMMY.Resources.User : SCIMMY.Resources.Group;
      const id = m[2] ? decodeURIComponent(m[2]) : undefined;
      const query: Json = {};
      for (const k of ['filter', 'startIndex', 'count', 'attributes']) if (url.searchParams.has(k)) query[k] = url.searchParams.get(k);
      if (query.startIndex) query.startIndex = Number(query.startIndex);
      if (query.count) query.count = Number(query.count);
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      const resource = id ? new Type(id, query) : new Type(query);
      if (req.method === 'GET') return send(200, await resource.read(store));
      if (req.method === 'POST' && !id) return send(201, await resource.write(body, store));
      if (req.method === 'PUT' && id) return send(200, await resource.write(body, store));
      if (req.method === 'DELETE' && id) {
        await resource.dispose(store);
        return send(204);
      }
      return send(405, new SCIMMY.Messages.Error({ status: 405, detail: 'not here' }));
    } catch (err: any) {
      if (err instanceof SCIMMY.Types.Error) return send(err.status, new SCIMMY.Messages.Error(err));
      return send(500, { detail: String(err?.message ?? err) });
    }
  };
  let server: http.Server | null = null;
  let port = o.port ?? 0;
  const up = async () => {
    server = http.createServer((req, res) => void handle(req, res));
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  const down = async () => {
    const s = server;
    server = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()) && s.closeAllConnections());
  };
  await up();
  t.teardown(down);
  return {
    get url() {
      return `http://127.0.0.1:${port}/scim/v2`;
    },
    get port() {
      return port;
    },
    token,
    store,
    requests,
    down,
    up,
  };
}

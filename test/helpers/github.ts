/**
 * A stand-in for GitHub's OAuth app sign-in and the REST API calls a sign-in makes (there is no
 * public test server), written from GitHub's documentation and kept small:
 *   - GET  /login/oauth/authorize: client_id, redirect_uri (the registered callback's host and port, its path or below),
 *     scope, state, code_challenge with code_challenge_method S256. The person signed in at the
 *     stand-in (`signedIn`) has authorized the app already, so it sends the browser straight
 *     back with code and state, as GitHub does;
 *   - POST /login/oauth/access_token: a form with client_id, client_secret, code, redirect_uri and
 *     code_verifier; JSON when asked with Accept: application/json, else GitHub's default
 *     form-encoded answer; a bad code is answered 200 with an `error` (as GitHub does);
 *   - GET /api/v3/user, /user/emails, /user/orgs, /user/teams (GitHub Enterprise Server's API
 *     path): Authorization `Bearer TOKEN` (or the older `token TOKEN`), 401 "Bad credentials"
 *     otherwise; a User-Agent, or 403; Accept application/vnd.github+json (or application/json),
 *     or 415; X-GitHub-Api-Version, when sent, 2022-11-28, or 400; /user/emails needs the
 *     user:email scope (404 without), /user/teams read:org (403 without), /user/orgs lists only
 *     public memberships without read:org; lists paginate with per_page and page.
 * Every request's method, path, query and headers are kept (`requests`) for the tests to read.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import type { Test } from 'tap';

export interface GithubUser {
  id: number;
  login: string;
  name: string | null;
  /** The public address GET /user shows (may be null, or not verified). */
  publicEmail?: string | null;
  emails: Array<{ email: string; primary: boolean; verified: boolean }>;
  /** Organisation logins, and whether the membership is public. */
  orgs: Array<{ login: string; public: boolean }>;
  teams: Array<{ org: string; slug: string }>;
}

export interface GithubStandIn {
  url: string;
  api: string;
  clientId: string;
  clientSecret: string;
  users: Map<string, GithubUser>;
  /** The login the browser is signed in as at the stand-in. */
  signedIn: string;
  requests: Array<{ method: string; path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders }>;
}

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));
};

const readBody = (req: http.IncomingMessage) =>
  new Promise<string>((resolve) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString('utf8')));
    req.on('end', () => resolve(data));
  });

export async function startGithub(t: Test, o: { callback: string; clientId?: string; clientSecret?: string }): Promise<GithubStandIn> {
  const codes = new Map<string, { login: string; scopes: string[]; challenge: string | null; redirect: string }>();
  const tokens = new Map<string, { login: string; scopes: string[] }>();
  const gh: GithubStandIn = {
    url: '',
    api: '',
    clientId: o.clientId ?? 'Ov23liStandIn0001',
    clientSecret: o.clientSecret ?? randomBytes(20).toString('hex'),
    users: new Map(),
    signedIn: '',
    requests: [],
  };

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', gh.url);
    gh.requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers });
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      const q = url.searchParams;
      if (q.get('client_id') !== gh.clientId) return void res.writeHead(404).end('Not Found');
      // GitHub: the redirect_uri's host and port match the registered callback URL's exactly, and its path is that path or below it.
      const redirect = URL.canParse(q.get('redirect_uri') ?? '') ? new URL(q.get('redirect_uri')!) : null;
      const registered = new URL(o.callback);
      if (!redirect || redirect.origin !== registered.origin || !redirect.pathname.startsWith(registered.pathname)) {
        return void res.writeHead(400).end('The redirect_uri is not associated with this application.');
      }
      if (q.get('code_challenge') !== null && q.get('code_challenge_method') !== 'S256')
        return void res.writeHead(400).end('code_challenge_method must be S256');
      const code = randomBytes(10).toString('hex');
      codes.set(code, {
        login: gh.signedIn,
        scopes: (q.get('scope') ?? '').split(/[ ,]+/).filter(Boolean),
        challenge: q.get('code_challenge'),
        redirect: q.get('redirect_uri')!,
      });
      const back = new URL(redirect.href);
      back.searchParams.set('code', code);
      if (q.get('state') !== null) back.searchParams.set('state', q.get('state')!);
      return void res.writeHead(302, { Location: back.href }).end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      const form = new URLSearchParams(await readBody(req));
      const asJson = (req.headers.accept ?? '').includes('application/json');
      const answer = (body: Record<string, string>) =>
        asJson ? json(res, 200, body) : res.writeHead(200, { 'Content-Type': 'application/x-www-form-urlencoded' }).end(new URLSearchParams(body).toString());
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (form.get('client_id') !== gh.clientId || form.get('client_secret') !== gh.clientSecret) {
        return answer({ error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
      }
      const verifier = form.get('code_verifier');
      const pkceOk = grant?.challenge === null || (verifier !== null && createHash('sha256').update(verifier).digest('base64url') === grant?.challenge);
      if (!grant || !pkceOk || (form.get('redirect_uri') !== null && form.get('redirect_uri') !== grant.redirect)) {
        return answer({ error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
      }
      const token = `gho_${randomBytes(18).toString('base64url')}`;
      tokens.set(token, { login: grant.login, scopes: grant.scopes });
      return answer({ access_token: token, token_type: 'bearer', scope: grant.scopes.join(',') });
    }
    if (req.method === 'GET' && url.pathname.startsWith('/api/v3/')) {
      const m = /^(?:Bearer|token) (\S+)$/.exec(req.headers.authorization ?? '');
      const grant = m ? tokens.get(m[1]) : undefined;
      if (!grant) return json(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
      if (!req.headers['user-agent'])
        return json(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header' });
      const accept = req.headers.accept ?? '';
      if (!/application\/vnd\.github\+json|application\/json/.test(accept)) return json(res, 415, { message: 'Unsupported Media Type' });
      const version = req.headers['x-github-api-version'];
      if (version !== undefined && version !== '2022-11-28') return json(res, 400, { message: `API version ${String(version)} is not supported.` });
      const user = gh.users.get(grant.login)!;
      const scoped = { 'X-OAuth-Scopes': grant.scopes.join(', ') };
      const page = <T>(items: T[]) => {
        const per = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
        const n = Math.max(1, Number(url.searchParams.get('page') ?? 1));
        return items.slice((n - 1) * per, n * per);
      };
      const path = url.pathname.slice('/api/v3'.length);
      if (path === '/user') return json(res, 200, { login: user.login, id: user.id, type: 'User', name: user.name, email: user.publicEmail ?? null }, scoped);
      if (path === '/user/emails') {
        if (!grant.scopes.includes('user:email') && !grant.scopes.includes('user')) return json(res, 404, { message: 'Not Found' }, scoped);
        return json(res, 200, page(user.emails.map((e) => ({ ...e, visibility: e.primary ? 'public' : null }))), scoped);
      }
      if (path === '/user/orgs') {
        const orgs = user.orgs.filter((x) => x.public || grant.scopes.includes('read:org'));
        return json(res, 200, page(orgs.map((x, i) => ({ login: x.login, id: 1000 + i, description: null }))), scoped);
      }
      if (path === '/user/teams') {
        if (!grant.scopes.includes('read:org')) return json(res, 403, { message: 'Resource not accessible by integration' }, scoped);
        return json(res, 200, page(user.teams.map((x, i) => ({ id: 2000 + i, name: x.slug, slug: x.slug, organization: { login: x.org, id: 1000 } }))), scoped);
      }
      return json(res, 404, { message: 'Not Found' });
    }
    res.writeHead(404).end('Not Found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  gh.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  gh.api = `${gh.url}/api/v3`;
  return gh;
}

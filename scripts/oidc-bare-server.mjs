// The benchmark's yardstick for the token endpoint: oidc-provider alone (the version Gatehouse
// bundles), configured like Gatehouse's (routes under /oidc, RS256, code flow with PKCE, rotating
// refresh tokens, the same lifetimes) but with the library's in-memory storage and no store
// checks, and with every interaction answered at once (signed in as "bench", consent given).
// Prints {"url": …} once listening. Used by scripts/oidc-load.mjs.
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';
import { AUDIENCE, BARE_SECRET, REDIRECT } from './oidc-load.mjs';

const server = http.createServer();
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' };

/**
 * The simplest storage: one Map per model, entries dropped when they expire. (The library's own
 * development adapter is an LRU of 1,000 entries: a benchmark's codes would fall out of it.)
 */
const maps = new Map();
class MemoryStore {
  constructor(model) {
    if (!maps.has(model)) maps.set(model, new Map());
    this.map = maps.get(model);
    this.grants = maps.get('_grants') ?? maps.set('_grants', new Map()).get('_grants');
  }
  async upsert(id, payload, expiresIn) {
    this.map.set(id, { payload, until: Date.now() + expiresIn * 1000 });
    if (payload.grantId) this.grants.set(payload.grantId, [...(this.grants.get(payload.grantId) ?? []), [this.map, id]]);
  }
  async find(id) {
    const e = this.map.get(id);
    if (!e || e.until < Date.now()) return undefined;
    return e.payload;
  }
  async findByUid(uid) {
    for (const e of this.map.values()) if (e.payload.uid === uid && e.until >= Date.now()) return e.payload;
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id) {
    const e = this.map.get(id);
    if (e) e.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    this.map.delete(id);
  }
  async revokeByGrantId(grantId) {
    for (const [map, id] of this.grants.get(grantId) ?? []) map.delete(id);
    this.grants.delete(grantId);
  }
}

const provider = new Provider(url, {
  adapter: MemoryStore,
  cookies: { keys: ['bench-cookie-key-of-the-bare-provider'] },
  clients: [
    {
      client_id: 'bench',
      client_secret: BARE_SECRET,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    // Client credentials as Gatehouse issues them: a JWT access token (RFC 9068) for one audience.
    { client_id: 'bench-machine', client_secret: BARE_SECRET, grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
  ],
  jwks: { keys: [jwk] },
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  claims: { openid: ['sub'] },
  scopes: ['openid', 'offline_access'],
  responseTypes: ['code'],
  pkce: { methods: ['S256'], required: () => true },
  rotateRefreshToken: true,
  ttl: {
    AccessToken: 900,
    AuthorizationCode: 60,
    IdToken: 900,
    Interaction: 3600,
    Session: 14 * 24 * 3600,
    Grant: 90 * 24 * 3600,
    RefreshToken: 30 * 24 * 3600,
  },
  features: {
    devInteractions: { enabled: false },
    revocation: { enabled: true },
    introspection: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf ?? (ctx.oidc.params?.grant_type === 'client_credentials' ? AUDIENCE : undefined),
      useGrantedResource: async () => false,
      getResourceServerInfo: async () => ({ scope: '', audience: AUDIENCE, accessTokenFormat: 'jwt', accessTokenTTL: 600, jwt: { sign: { alg: 'RS256' } } }),
    },
  },
  routes: { authorization: '/oidc/auth', token: '/oidc/token', userinfo: '/oidc/me', jwks: '/oidc/jwks' },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
});

const callback = provider.callback();
server.on('request', async (req, res) => {
  if (!req.url.startsWith('/interaction/')) return callback(req, res);
  const details = await provider.interactionDetails(req, res);
  const grant = new provider.Grant({ accountId: 'bench', clientId: details.params.client_id });
  grant.addOIDCScope(details.params.scope);
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: 'bench' }, consent: { grantId } }, { mergeWithLastSubmission: false });
});
console.log(JSON.stringify({ url }));
process.on('SIGTERM', () => server.close(() => process.exit(0)));

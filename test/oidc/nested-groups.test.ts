// Nested groups read by a relying party nobody here wrote (openid-client): a person in a group
// inside the client's allowed group signs in, and the `groups` claim names every group they are
// in, directly or not; taking the inner group out refuses the next refresh.
import t from 'tap';
import * as oidc from 'openid-client';
import { cli } from '../helpers/cli';
import { PASSWORD } from '../helpers/server';
import { browser } from '../helpers/oidc-http';
import { addClient, authorizationRequest, providerWith, REDIRECT, relyingParty } from '../helpers/oidc';

t.test('openid-client: the gate and the groups claim follow nesting', async (t) => {
  const s = await providerWith(t, 'ada@example.com');
  for (const args of [
    ['group', 'create', 'staff'],
    ['group', 'create', 'engineering'],
    ['group', 'add', 'engineering', 'ada@example.com'],
    ['group', 'add-group', 'staff', 'engineering'],
  ])
    t.equal((await cli(s.dataDir, args)).code, 0, args.join(' '));
  const config = await relyingParty(s, await addClient(s, '--first-party', '--allowed-group', 'staff'));

  // The browser half over plain HTTP: Gatehouse's sign-in page, then the authorization's redirects.
  const request = browser(s.url);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await (await request('/signin')).text())![1];
  await request('/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, email: 'ada@example.com', password: PASSWORD }).toString(),
  });
  const state = oidc.randomState();
  const { url, verifier } = await authorizationRequest(config, 'openid groups offline_access', state);
  let location = url.href;
  while (!location.startsWith(REDIRECT)) {
    const res = await request(location);
    await res.arrayBuffer();
    location = new URL(res.headers.get('location') ?? t.fail(`stopped at ${res.status}`), location).href;
  }
  const tokens = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: verifier, expectedState: state });
  const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
  t.same((info.groups as string[]).sort(), ['engineering', 'staff', 'users'], 'engineering ⊂ staff: both in the groups claim');

  t.equal((await cli(s.dataDir, ['group', 'remove-group', 'staff', 'engineering'])).code, 0);
  await t.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token!), 'outside the gate now: the refresh is refused');
});

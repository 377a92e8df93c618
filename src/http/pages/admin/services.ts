/**
 * The console's OpenID Connect clients and forward-auth apps. A client's secret is shown once, on
 * the page that answers its creation or rotation (never cached, never shown again).
 */
import type { Context } from 'koa';
import { ID_TOKEN_CLAIMS, type ClientView } from '../../../core';
import { breakable, field, html, type Html } from '../html';
import { type PageKit, str } from '../kit';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, dataTable, managedNote, onOff } from './kit';
import { groupChoices, many } from './people';

const lines = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((l) => l.trim())
    .filter(Boolean);

const GRANT_WORDS: Record<ClientView['grants'][number], string> = {
  authorization_code: 'browser sign-in',
  device_code: 'device',
  client_credentials: 'client credentials',
};

/** The boxes of the claims a client's ID tokens carry, those it has ticked. */
const idTokenBoxes = (chosen: readonly string[]) =>
  Object.entries(ID_TOKEN_CLAIMS).map(
    ([claim, scope]) =>
      html`<label class="check"
        ><input type="checkbox" name="id_token_claims" value="${claim}" ${chosen.includes(claim) ? 'checked' : ''} /> ${claim}
        <span class="meta">(${scope} scope)</span></label
      >`,
  );

export function registerConsoleServices(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const secretOnce = (client: { client_id: string; name: string }, secret: string) =>
    html`<section aria-labelledby="h-secret" class="notice success">
      <h2 id="h-secret">The client secret of ${client.name}</h2>
      <p class="meta">Client id ${client.client_id}</p>
      <p>Copy it now into the application's settings: it is shown only this once.</p>
      <p class="secret-once" id="client-secret">${secret}</p>
    </section>`;

  const clientsPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const [clients, managed] = await Promise.all([core.clients.list(a.actor), core.configFile.managedBy(a.actor)]);
    c.show(
      ctx,
      a,
      'clients',
      'OIDC clients',
      html`${o.top ?? ''}
        <section>
          ${
            clients.length === 0
              ? html`<p>No clients yet.</p>`
              : html`${dataTable(
                  [
                    'Name',
                    'Client id',
                    'Grants',
                    { label: 'Redirect URIs', wide: true },
                    { label: 'Allowed groups', wide: true },
                    { label: 'Change', quiet: true },
                  ],
                  clients.map(
                    (cl: ClientView) =>
                      html`<tr>
                        <td>
                          ${cl.name}${cl.first_party ? html` <span class="meta">(first party)</span>` : ''}${cl.public ? html` <span class="meta">(public)</span>` : ''}${
                            cl.two_factor ? html`<br /><span class="meta">two factors required</span>` : ''
                          }${cl.backchannel_logout_uri ? html`<br /><span class="meta">logouts to ${breakable(cl.backchannel_logout_uri)}</span>` : ''}${
                            cl.id_token_claims.length > 0 ? html`<br /><span class="meta">ID token: ${cl.id_token_claims.join(', ')}</span>` : ''
                          }
                        </td>
                        <td><code>${cl.client_id}</code></td>
                        <td>
                          ${cl.grants.map((g) => GRANT_WORDS[g]).join(', ')}${cl.audience === null ? '' : html`<br /><span class="meta">for ${cl.audience}</span>`}
                        </td>
                        <td class="wide-only">${cl.redirect_uris.map((u, i) => html`${i ? html`<br />` : ''}${breakable(u)}`)}</td>
                        <td class="wide-only">${cl.allowed_groups.join(', ') || 'everyone'}</td>
                        <td class="actions">
                          ${managed.of('oidc_client', cl.client_id) !== null ? managedNote(managed.of('oidc_client', cl.client_id)!) : ''}
                          ${
                            managed.of('oidc_client', cl.client_id) !== null
                              ? ''
                              : cl.grants.includes('authorization_code')
                                ? actionButton(a.csrf, '/admin/clients/two-factor', cl.two_factor ? 'Allow one factor' : 'Require two factors', {
                                    hidden: { client_id: cl.client_id, two_factor: cl.two_factor ? 'off' : 'on' },
                                  })
                                : ''
                          }
                          ${
                            managed.of('oidc_client', cl.client_id) !== null || !(cl.grants.includes('authorization_code') || cl.grants.includes('device_code'))
                              ? ''
                              : html`<details>
                                  <summary>ID token claims</summary>
                                  <form method="post" action="/admin/clients/id-token-claims">
                                    <input type="hidden" name="csrf" value="${a.csrf}" />
                                    <input type="hidden" name="client_id" value="${cl.client_id}" />
                                    ${idTokenBoxes(cl.id_token_claims)}
                                    <button type="submit">Save claims</button>
                                  </form>
                                </details>`
                          }
                          ${
                            cl.public || managed.of('oidc_client', cl.client_id) !== null
                              ? ''
                              : actionButton(a.csrf, '/admin/clients/rotate', 'Rotate secret', {
                                  hidden: { client_id: cl.client_id },
                                  confirm: 'Replace the secret (the old one stops working)',
                                })
                          }
                          ${
                            managed.of('oidc_client', cl.client_id) !== null
                              ? ''
                              : actionButton(a.csrf, '/admin/clients/remove', 'Remove', { hidden: { client_id: cl.client_id }, confirm: `Remove ${cl.name}` })
                          }
                        </td>
                      </tr>`,
                  ),
                )}`
          }
        </section>
        <section aria-labelledby="h-new-client">
          <h2 id="h-new-client">New client</h2>
          <form method="post" action="/admin/clients">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('name', 'Name', { maxlength: 100, autocomplete: 'off' })}
            <div class="field">
              <label for="f-redirect">Redirect URIs</label>
              <textarea id="f-redirect" name="redirect_uris" rows="2" aria-describedby="f-redirect-hint"></textarea>
              <small id="f-redirect-hint"
                >For sign-in in a browser: one or more, exactly as the application sends them (https://app.example.com/callback). Empty for a device or a
                machine.</small
              >
            </div>
            <label class="check"
              ><input type="checkbox" name="device" value="yes" /> Device flow: a TV or command line shows a code to confirm at /device</label
            >
            <label class="check"
              ><input type="checkbox" name="credentials" value="yes" /> Client credentials: a machine acting as itself (needs a secret)</label
            >
            ${field('audience', 'Audience (client credentials)', {
              required: false,
              autocomplete: 'off',
              maxlength: 200,
              hint: 'The API its tokens are for, as that API names itself (https://api.example.com). Empty: urn:gatehouse:client:<client id>.',
            })}
            ${await groupChoices(kit, a, 'groups', 'Only members of these groups may sign in (none ticked: everyone)')}
            ${field('backchannel_logout_uri', 'Back-channel logout URI', {
              required: false,
              autocomplete: 'off',
              maxlength: 500,
              hint: "Where Gatehouse tells the application that a person's session ended (https://app.example.com/backchannel-logout). Empty: not told.",
            })}
            <fieldset aria-describedby="f-id-token-hint">
              <legend>Also in the ID token</legend>
              ${idTokenBoxes([])}
              <small id="f-id-token-hint"
                >Userinfo always has them. Tick these for an application that reads only the ID token (oauth2-proxy, Kubernetes); each comes only when the
                application asks for its scope. Email brings email_verified.</small
              >
            </fieldset>
            <label class="check"><input type="checkbox" name="first_party" value="yes" /> First party: no consent page</label>
            <label class="check"><input type="checkbox" name="two_factor" value="yes" /> Two factors: a sign-in with one is asked for the second</label>
            <label class="check"><input type="checkbox" name="public" value="yes" /> Public client (a browser or mobile app: no secret, PKCE)</label>
            <button type="submit">Add client</button>
          </form>
        </section>`,
      o,
    );
  };
  c.get('/admin/clients', 'clients', clientsPage);
  // Creation and rotation answer a page (not a redirect): the secret is in this answer only.
  kit.post('/admin/clients', async (ctx) => {
    await c.run(ctx, clientsPage, async (a, body) => {
      const added = await core.clients.add(a.actor, {
        name: str(body, 'name'),
        redirectUris: lines(str(body, 'redirect_uris')),
        device: str(body, 'device') === 'yes',
        credentials: str(body, 'credentials') === 'yes',
        audience: str(body, 'audience').trim() || undefined,
        allowedGroups: many(body, 'groups'),
        firstParty: str(body, 'first_party') === 'yes',
        public: str(body, 'public') === 'yes',
        twoFactor: str(body, 'two_factor') === 'yes',
        backchannelLogoutUri: str(body, 'backchannel_logout_uri').trim() || undefined,
        idTokenClaims: many(body, 'id_token_claims'),
      });
      return clientsPage(ctx, a, {
        top: added.client_secret ? secretOnce(added, added.client_secret) : html`<p class="notice success">Client ${added.client_id} added.</p>`,
      });
    });
  });
  kit.post('/admin/clients/rotate', async (ctx) => {
    await c.run(ctx, clientsPage, async (a, body) => {
      assertConfirmed(body);
      const r = await core.clients.rotateSecret(a.actor, str(body, 'client_id'));
      const { name } = await core.clients.show(a.actor, r.client_id);
      return clientsPage(ctx, a, { top: secretOnce({ ...r, name }, r.client_secret) });
    });
  });
  c.post(
    '/admin/clients/two-factor',
    async (_ctx, a, body) => {
      await core.clients.change(a.actor, str(body, 'client_id'), { twoFactor: onOff(str(body, 'two_factor')) });
      return '/admin/clients?done=client_changed';
    },
    clientsPage,
  );
  c.post(
    '/admin/clients/id-token-claims',
    async (_ctx, a, body) => {
      await core.clients.change(a.actor, str(body, 'client_id'), { idTokenClaims: many(body, 'id_token_claims') });
      return '/admin/clients?done=client_changed';
    },
    clientsPage,
  );
  c.post(
    '/admin/clients/remove',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.clients.remove(a.actor, str(body, 'client_id'));
      return '/admin/clients?done=client_removed';
    },
    clientsPage,
  );

  // ---- Apps behind forward authentication -----------------------------------------------------
  const appsPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const [apps, managed] = await Promise.all([core.apps.list(a.actor), core.configFile.managedBy(a.actor)]);
    c.show(
      ctx,
      a,
      'apps',
      'Apps behind the proxy',
      html`<section>
          ${
            apps.length === 0
              ? html`<p>No apps yet: the proxy refuses every host.</p>`
              : html`${dataTable(
                  [
                    'Host',
                    'Paths',
                    { label: 'Open paths', wide: true },
                    'Allowed groups',
                    { label: 'Two-factor', wide: true },
                    { label: 'Remove', quiet: true },
                  ],
                  apps.map(
                    (app) =>
                      html`<tr>
                        <td>${app.host}</td>
                        <td>${app.paths.join(' ') || 'all'}</td>
                        <td class="wide-only">${app.bypass_paths.join(' ') || 'none'}</td>
                        <td>${app.allowed_groups.map((g) => g.name ?? '(deleted)').join(', ') || 'every account'}</td>
                        <td class="wide-only">${app.two_factor ? 'required' : 'no'}</td>
                        <td class="actions">
                          ${
                            managed.app(app.host, app.paths) !== null
                              ? managedNote(managed.app(app.host, app.paths)!)
                              : actionButton(a.csrf, '/admin/apps/remove', 'Remove', { hidden: { app: app.reference_id }, confirm: `Remove ${app.host}` })
                          }
                        </td>
                      </tr>`,
                  ),
                )}`
          }
        </section>
        <section aria-labelledby="h-new-app">
          <h2 id="h-new-app">New app</h2>
          <form method="post" action="/admin/apps">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('host', 'Host', { autocomplete: 'off', hint: 'As the proxy forwards it: grafana.example.com' })}
            ${field('paths', 'Path prefixes', { required: false, autocomplete: 'off', hint: 'Space-separated; empty: the whole host' })}
            ${field('bypass', 'Open paths', { required: false, autocomplete: 'off', hint: 'Space-separated prefixes anyone may open, signed in or not' })}
            ${await groupChoices(kit, a, 'groups', 'Only members of these groups may pass (none ticked: every signed-in account)')}
            <label class="check"><input type="checkbox" name="two_factor" value="yes" /> Require two-factor (TOTP or a passkey)</label>
            <button type="submit">Add app</button>
          </form>
        </section>`,
      o,
    );
  };
  c.get('/admin/apps', 'apps', appsPage);
  c.post(
    '/admin/apps',
    async (_ctx, a, body) => {
      await core.apps.add(a.actor, {
        host: str(body, 'host'),
        paths: lines(str(body, 'paths')),
        bypassPaths: lines(str(body, 'bypass')),
        allowedGroups: many(body, 'groups'),
        twoFactor: str(body, 'two_factor') === 'yes',
      });
      return '/admin/apps?done=app_added';
    },
    appsPage,
  );
  c.post(
    '/admin/apps/remove',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.apps.remove(a.actor, str(body, 'app'));
      return '/admin/apps?done=app_removed';
    },
    appsPage,
  );
}

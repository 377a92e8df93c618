/**
 * The console's OpenID Connect clients and forward-auth apps. A client's secret is shown once, on
 * the page that answers its creation or rotation (never cached, never shown again).
 */
import type { Context } from 'koa';
import { ID_TOKEN_CLAIMS, type ClientView, type MessageKey } from '../../../core';
import { breakable, field, html, type Html, tm } from '../html';
import { t } from '../look';
import { type PageKit, str } from '../kit';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, data, dataTable, managedNote, onOff } from './kit';
import { groupChoices, many } from './people';

const lines = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((l) => l.trim())
    .filter(Boolean);

const GRANT_WORDS: Record<ClientView['grants'][number], MessageKey> = {
  authorization_code: 'admin.clients.grant.browser',
  device_code: 'admin.clients.grant.device',
  client_credentials: 'admin.clients.grant.credentials',
};

/** The boxes of the claims a client's ID tokens carry, those it has ticked. */
const idTokenBoxes = (chosen: readonly string[]) =>
  Object.entries(ID_TOKEN_CLAIMS).map(
    ([claim, scope]) =>
      html`<label class="check"
        ><input type="checkbox" name="id_token_claims" value="${claim}" ${chosen.includes(claim) ? 'checked' : ''} /> <code>${claim}</code>
        <span class="meta">${tm('admin.clients.claim_scope', { scope: html`<code>${scope}</code>` })}</span></label
      >`,
  );

/** Group names in running text (data), or the words for none. */
const groupList = (names: readonly string[], none: MessageKey): Html | string =>
  names.length === 0 ? t(none) : html`${names.map((n, i) => html`${i > 0 ? ', ' : ''}${data(n)}`)}`;

export function registerConsoleServices(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const secretOnce = (client: { client_id: string; name: string }, secret: string) =>
    html`<section aria-labelledby="h-secret" class="notice success">
      <h2 id="h-secret">${tm('admin.clients.secret_title', { name: data(client.name) })}</h2>
      <p class="meta">${tm('admin.clients.secret_client_id', { id: html`<code>${client.client_id}</code>` })}</p>
      <p>${t('admin.clients.secret_copy')}</p>
      <p class="secret-once" id="client-secret">${secret}</p>
    </section>`;

  const clientsPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const [clients, managed] = await Promise.all([core.clients.list(a.actor), core.configFile.managedBy(a.actor)]);
    c.show(
      ctx,
      a,
      'clients',
      t('admin.nav.clients'),
      html`${o.top ?? ''}
        <section>
          ${
            clients.length === 0
              ? html`<p>${t('admin.clients.none')}</p>`
              : html`${dataTable(
                  [
                    t('admin.name'),
                    t('admin.clients.client_id'),
                    t('admin.clients.grants'),
                    { label: t('admin.clients.redirect_uris'), wide: true },
                    { label: t('admin.allowed_groups'), wide: true },
                    { label: t('admin.change'), quiet: true },
                  ],
                  clients.map(
                    (cl: ClientView) =>
                      html`<tr>
                        <td>
                          ${data(cl.name)}${cl.first_party ? html` <span class="meta">${t('admin.clients.first_party_mark')}</span>` : ''}${
                            cl.public ? html` <span class="meta">${t('admin.clients.public_mark')}</span>` : ''
                          }${cl.two_factor ? html`<br /><span class="meta">${t('admin.clients.two_factor_mark')}</span>` : ''}${
                            cl.backchannel_logout_uri
                              ? html`<br /><span class="meta">${tm('admin.clients.logouts_to', { uri: breakable(cl.backchannel_logout_uri) })}</span>`
                              : ''
                          }${
                            cl.id_token_claims.length > 0
                              ? html`<br /><span class="meta"
                                    >${tm('admin.clients.id_token_mark', { claims: html`<code>${cl.id_token_claims.join(', ')}</code>` })}</span
                                  >`
                              : ''
                          }
                        </td>
                        <td><code>${cl.client_id}</code></td>
                        <td>
                          ${cl.grants.map((g) => t(GRANT_WORDS[g])).join(', ')}${
                            cl.audience === null
                              ? ''
                              : html`<br /><span class="meta">${tm('admin.clients.audience_mark', { audience: breakable(cl.audience) })}</span>`
                          }
                        </td>
                        <td class="wide-only">${cl.redirect_uris.map((u, i) => html`${i ? html`<br />` : ''}${breakable(u)}`)}</td>
                        <td class="wide-only">${groupList(cl.allowed_groups, 'admin.everyone')}</td>
                        <td class="actions">
                          ${managed.of('oidc_client', cl.client_id) !== null ? managedNote(managed.of('oidc_client', cl.client_id)!) : ''}
                          ${
                            managed.of('oidc_client', cl.client_id) !== null
                              ? ''
                              : cl.grants.includes('authorization_code')
                                ? actionButton(a.csrf, '/admin/clients/two-factor', t(cl.two_factor ? 'admin.allow_one_factor' : 'admin.require_two_factors'), {
                                    hidden: { client_id: cl.client_id, two_factor: cl.two_factor ? 'off' : 'on' },
                                  })
                                : ''
                          }
                          ${
                            managed.of('oidc_client', cl.client_id) !== null || !(cl.grants.includes('authorization_code') || cl.grants.includes('device_code'))
                              ? ''
                              : html`<details>
                                  <summary>${t('admin.clients.id_token_claims')}</summary>
                                  <form method="post" action="/admin/clients/id-token-claims">
                                    <input type="hidden" name="csrf" value="${a.csrf}" />
                                    <input type="hidden" name="client_id" value="${cl.client_id}" />
                                    ${idTokenBoxes(cl.id_token_claims)}
                                    <button type="submit">${t('admin.clients.save_claims')}</button>
                                  </form>
                                </details>`
                          }
                          ${
                            cl.public || managed.of('oidc_client', cl.client_id) !== null
                              ? ''
                              : actionButton(a.csrf, '/admin/clients/rotate', t('admin.clients.rotate'), {
                                  hidden: { client_id: cl.client_id },
                                  confirm: t('admin.clients.rotate_confirm'),
                                })
                          }
                          ${
                            managed.of('oidc_client', cl.client_id) !== null
                              ? ''
                              : actionButton(a.csrf, '/admin/clients/remove', t('admin.remove'), {
                                  hidden: { client_id: cl.client_id },
                                  confirm: tm('admin.remove_confirm', { name: data(cl.name) }),
                                })
                          }
                        </td>
                      </tr>`,
                  ),
                )}`
          }
        </section>
        <section aria-labelledby="h-new-client">
          <h2 id="h-new-client">${t('admin.clients.new')}</h2>
          <form method="post" action="/admin/clients">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('name', t('admin.name'), { maxlength: 100, autocomplete: 'off' })}
            <div class="field">
              <label for="f-redirect">${t('admin.clients.redirect_uris')}</label>
              <textarea id="f-redirect" name="redirect_uris" rows="2" aria-describedby="f-redirect-hint"></textarea>
              <small id="f-redirect-hint">${tm('admin.clients.redirect_hint', { example: html`<code>https://app.example.com/callback</code>` })}</small>
            </div>
            <label class="check"
              ><input type="checkbox" name="device" value="yes" />
              <span>${tm('admin.clients.device_hint', { label: html`${t('admin.clients.device')}`, path: html`<code>/device</code>` })}</span></label
            >
            <label class="check"
              ><input type="checkbox" name="credentials" value="yes" /> ${t('admin.clients.credentials_hint', { label: t('admin.clients.credentials') })}</label
            >
            ${field('audience', t('admin.clients.audience_label'), {
              required: false,
              autocomplete: 'off',
              maxlength: 200,
              hint: t('admin.clients.audience_hint', { example: 'https://api.example.com', fallback: 'urn:gatehouse:client:<client id>' }),
            })}
            ${await groupChoices(kit, a, 'groups', t('admin.clients.groups'))}
            ${field('backchannel_logout_uri', t('admin.clients.backchannel'), {
              required: false,
              autocomplete: 'off',
              maxlength: 500,
              hint: t('admin.clients.backchannel_hint', { example: 'https://app.example.com/backchannel-logout' }),
            })}
            <fieldset aria-describedby="f-id-token-hint">
              <legend>${t('admin.clients.id_token_legend')}</legend>
              ${idTokenBoxes([])}
              <small id="f-id-token-hint">${tm('admin.clients.id_token_hint', { verified: html`<code>email_verified</code>` })}</small>
            </fieldset>
            <label class="check"><input type="checkbox" name="first_party" value="yes" /> ${t('admin.clients.first_party')}</label>
            <label class="check"
              ><input type="checkbox" name="two_factor" value="yes" /> ${t('admin.clients.two_factor_hint', { label: t('admin.two_factors') })}</label
            >
            <label class="check"><input type="checkbox" name="public" value="yes" /> ${t('admin.clients.public')} ${t('admin.clients.public_hint')}</label>
            <button type="submit">${t('admin.clients.add')}</button>
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
        top: added.client_secret
          ? secretOnce(added, added.client_secret)
          : html`<p class="notice success">${tm('admin.clients.added', { id: html`<code>${added.client_id}</code>` })}</p>`,
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
      t('admin.apps.title'),
      html`<section>
          ${
            apps.length === 0
              ? html`<p>${t('admin.apps.none')}</p>`
              : html`${dataTable(
                  [
                    t('admin.apps.host'),
                    t('admin.apps.paths_column'),
                    { label: t('admin.apps.open_paths'), wide: true },
                    t('admin.allowed_groups'),
                    { label: t('admin.account.two_factor'), wide: true },
                    { label: t('admin.remove'), quiet: true },
                  ],
                  apps.map(
                    (app) =>
                      html`<tr>
                        <td translate="no">${app.host}</td>
                        ${app.paths.length === 0 ? html`<td>${t('admin.apps.all_paths')}</td>` : html`<td><code>${app.paths.join(' ')}</code></td>`}
                        ${
                          app.bypass_paths.length === 0
                            ? html`<td class="wide-only">${t('admin.account.no_groups')}</td>`
                            : html`<td class="wide-only"><code>${app.bypass_paths.join(' ')}</code></td>`
                        }
                        <td>
                          ${
                            app.allowed_groups.length === 0
                              ? t('admin.apps.every_account')
                              : app.allowed_groups.map((g, i) => html`${i > 0 ? ', ' : ''}${g.name === null ? t('admin.apps.deleted_group') : data(g.name)}`)
                          }
                        </td>
                        <td class="wide-only">${t(app.two_factor ? 'admin.required' : 'admin.no')}</td>
                        <td class="actions">
                          ${
                            managed.app(app.host, app.paths) !== null
                              ? managedNote(managed.app(app.host, app.paths)!)
                              : actionButton(a.csrf, '/admin/apps/remove', t('admin.remove'), {
                                  hidden: { app: app.reference_id },
                                  confirm: tm('admin.remove_confirm', { name: data(app.host) }),
                                })
                          }
                        </td>
                      </tr>`,
                  ),
                )}`
          }
        </section>
        <section aria-labelledby="h-new-app">
          <h2 id="h-new-app">${t('admin.apps.new')}</h2>
          <form method="post" action="/admin/apps">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('host', t('admin.apps.host'), { autocomplete: 'off', hint: t('admin.apps.host_hint', { example: 'grafana.example.com' }) })}
            ${field('paths', t('admin.apps.paths'), { required: false, autocomplete: 'off', hint: t('admin.apps.paths_hint') })}
            ${field('bypass', t('admin.apps.open_paths'), { required: false, autocomplete: 'off', hint: t('admin.apps.open_paths_hint') })}
            ${await groupChoices(kit, a, 'groups', t('admin.apps.groups'))}
            <label class="check"><input type="checkbox" name="two_factor" value="yes" /> ${t('admin.apps.two_factor')}</label>
            <button type="submit">${t('admin.apps.add')}</button>
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

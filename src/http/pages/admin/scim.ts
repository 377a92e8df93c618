/**
 * The console's SCIM page: tokens for provisioning services (made, shown once on the page that
 * answers their creation, listed with their last use, revoked) and push targets, apps Gatehouse
 * provisions (added, listed with what they hold and their queue, synced, removed). The shell's
 * operations.
 */
import type { Context } from 'koa';
import type { ScimTargetView, ScimTokenView } from '../../../core';
import { field, html, type Html, tm } from '../html';
import { t } from '../look';
import { type PageKit, str } from '../kit';
import { recentOrConfirm } from '../confirm';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, counted, data, dataTable, managedNote, when } from './kit';
import { groupChoices, many } from './people';

export function registerConsoleScim(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const scimPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const [tokens, targets, managed] = await Promise.all([core.scim.listTokens(a.actor), core.scim.listTargets(a.actor), core.configFile.managedBy(a.actor)]);
    const base = `${core.config.publicUrl}/scim/v2`;
    c.show(
      ctx,
      a,
      'provisioning',
      t('admin.scim.title'),
      html`${o.top ?? ''}
        <section>
          <p>${tm('admin.scim.intro', { url: html`<code>${base}</code>` })}</p>
          ${
            tokens.length === 0
              ? html`<p>${t('admin.scim.none')}</p>`
              : dataTable(
                  [t('admin.name'), t('admin.last_used'), { label: t('admin.account.made'), wide: true }, { label: t('admin.change'), quiet: true }],
                  tokens.map(
                    (x: ScimTokenView) =>
                      html`<tr>
                        <td>${data(x.name)}${x.revoked_at ? html` <span class="meta">${t('admin.scim.revoked')}</span>` : ''}</td>
                        <td>${when(x.last_used_at)}</td>
                        <td class="wide-only">${when(x.created_at)}</td>
                        <td class="actions">
                          ${
                            x.revoked_at
                              ? ''
                              : actionButton(a.csrf, '/admin/provisioning/revoke', t('admin.revoke'), {
                                  hidden: { id: x.id },
                                  confirm: tm('admin.scim.revoke_confirm', { name: data(x.name) }),
                                })
                          }
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-token">
          <h2 id="h-new-token">${t('admin.scim.new_token')}</h2>
          <form method="post" action="/admin/provisioning">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('name', t('admin.scim.token_name'), { maxlength: 64, autocomplete: 'off', hint: t('admin.scim.token_name_hint') })}
            <button type="submit">${t('admin.scim.make_token')}</button>
          </form>
        </section>
        <section aria-labelledby="h-targets">
          <h2 id="h-targets">${t('admin.scim.targets')}</h2>
          ${
            targets.length === 0
              ? html`<p>${t('admin.scim.targets_none')}</p>`
              : dataTable(
                  [
                    t('admin.scim.app'),
                    { label: t('admin.scim.people'), wide: true },
                    t('admin.scim.queue'),
                    { label: t('admin.last_error'), wide: true },
                    { label: t('admin.change'), quiet: true },
                  ],
                  targets.map(
                    (x: ScimTargetView) =>
                      html`<tr>
                        <td>
                          ${data(x.name)}<br /><span class="meta" translate="no">${x.url}</span><br /><span class="meta"
                            >${x.groups.length === 0 ? t('admin.everyone') : data(x.groups.join(', '))}</span
                          >
                        </td>
                        <td class="wide-only">${counted('admin.count.people', x.users)}, ${counted('admin.count.groups', x.group_count)}</td>
                        <td>
                          ${
                            x.pending === 0 && x.failed === 0
                              ? t('admin.scim.up_to_date')
                              : t('admin.scim.queue_state', { pending: x.pending, failed: x.failed })
                          }
                        </td>
                        ${x.last_error === null ? html`<td class="wide-only">-</td>` : html`<td class="wide-only" translate="no">${x.last_error}</td>`}
                        <td class="actions">
                          ${actionButton(a.csrf, '/admin/provisioning/sync', t('admin.scim.sync'), { hidden: { id: x.id } })}
                          ${
                            managed.of('scim_target', x.name) !== null
                              ? managedNote(managed.of('scim_target', x.name)!)
                              : actionButton(a.csrf, '/admin/provisioning/remove-target', t('admin.remove'), {
                                  hidden: { id: x.id },
                                  confirm: tm('admin.remove_confirm', { name: data(x.name) }),
                                })
                          }
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-target">
          <h2 id="h-new-target">${t('admin.scim.new_target')}</h2>
          <form method="post" action="/admin/provisioning/targets">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('url', t('admin.scim.target_url'), { type: 'url', autocomplete: 'off', hint: 'https://app.example.com/scim/v2' })}
            ${field('token', t('admin.scim.target_token'), { type: 'password', autocomplete: 'off', hint: t('admin.scim.target_token_hint') })}
            ${field('target_name', t('admin.name'), { maxlength: 64, autocomplete: 'off', required: false, hint: t('admin.scim.target_name_hint') })}
            ${await groupChoices(kit, a, 'groups', t('admin.scim.target_groups'))}
            <button type="submit">${t('admin.scim.add_target')}</button>
          </form>
        </section>`,
      o,
    );
  };

  c.get('/admin/provisioning', 'provisioning', scimPage);
  // Creation answers a page (not a redirect): the token is in this answer only.
  kit.post('/admin/provisioning', async (ctx) => {
    await c.run(ctx, scimPage, async (a, body) => {
      // A token is a way in (it provisions people): after a recent sign-in, or confirm it is you first.
      if (!(await recentOrConfirm(ctx, core, a, '/admin/provisioning'))) return;
      const made = await core.scim.addToken(a.actor, str(body, 'name'));
      return scimPage(ctx, a, {
        top: html`<section aria-labelledby="h-token" class="notice success">
          <h2 id="h-token">${tm('admin.scim.made', { name: data(made.name) })}</h2>
          <p>${t('admin.scim.copy')}</p>
          <p class="secret-once" id="scim-token">${made.token}</p>
        </section>`,
      });
    });
  });
  c.post(
    '/admin/provisioning/targets',
    async (_ctx, a, body) => {
      const name = str(body, 'target_name');
      await core.scim.addTarget(a.actor, { url: str(body, 'url'), token: str(body, 'token'), groups: many(body, 'groups'), ...(name ? { name } : {}) });
      return '/admin/provisioning?done=scim_target_added';
    },
    scimPage,
  );
  c.post(
    '/admin/provisioning/sync',
    async (_ctx, a, body) => {
      await core.scim.syncTarget(a.actor, str(body, 'id'));
      return '/admin/provisioning?done=scim_target_synced';
    },
    scimPage,
  );
  c.post(
    '/admin/provisioning/remove-target',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.scim.removeTarget(a.actor, str(body, 'id'));
      return '/admin/provisioning?done=scim_target_removed';
    },
    scimPage,
  );
  c.post(
    '/admin/provisioning/revoke',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.scim.revokeToken(a.actor, str(body, 'id'));
      return '/admin/provisioning?done=scim_token_revoked';
    },
    scimPage,
  );
}

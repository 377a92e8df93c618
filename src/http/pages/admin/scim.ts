/**
 * The console's SCIM page: tokens for provisioning services (made, shown once on the page that
 * answers their creation, listed with their last use, revoked) and push targets, apps Gatehouse
 * provisions (added, listed with what they hold and their queue, synced, removed). The shell's
 * operations.
 */
import type { Context } from 'koa';
import type { ScimTargetView, ScimTokenView } from '../../../core';
import { field, html, type Html } from '../html';
import { type PageKit, str } from '../kit';
import { recentOrConfirm } from '../confirm';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, dataTable, managedNote } from './kit';
import { groupChoices, many } from './people';

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

export function registerConsoleScim(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const scimPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const [tokens, targets, managed] = await Promise.all([core.scim.listTokens(a.actor), core.scim.listTargets(a.actor), core.configFile.managedBy(a.actor)]);
    const base = `${core.config.publicUrl}/scim/v2`;
    c.show(
      ctx,
      a,
      'provisioning',
      'Provisioning (SCIM)',
      html`${o.top ?? ''}
        <section>
          <p>Entra ID, Okta or a script reads and provisions people at <code>${base}</code> with a SCIM token.</p>
          ${
            tokens.length === 0
              ? html`<p>No SCIM tokens yet.</p>`
              : dataTable(
                  ['Name', 'Last used', { label: 'Made', wide: true }, { label: 'Change', quiet: true }],
                  tokens.map(
                    (x: ScimTokenView) =>
                      html`<tr>
                        <td>${x.name}${x.revoked_at ? html` <span class="meta">(revoked)</span>` : ''}</td>
                        <td>${x.last_used_at ? x.last_used_at.slice(0, 16).replace('T', ' ') : 'never'}</td>
                        <td class="wide-only">${x.created_at.slice(0, 10)}</td>
                        <td class="actions">
                          ${x.revoked_at ? '' : actionButton(a.csrf, '/admin/provisioning/revoke', 'Revoke', { hidden: { id: x.id }, confirm: `Revoke ${x.name}` })}
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-token">
          <h2 id="h-new-token">New SCIM token</h2>
          <form method="post" action="/admin/provisioning">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('name', 'Which service holds it?', { maxlength: 64, autocomplete: 'off', hint: 'entra, okta: listed and audited.' })}
            <button type="submit">Make token</button>
          </form>
        </section>
        <section aria-labelledby="h-targets">
          <h2 id="h-targets">Apps Gatehouse provisions</h2>
          ${
            targets.length === 0
              ? html`<p>No push targets yet: Gatehouse provisions no app over SCIM.</p>`
              : dataTable(
                  ['App', { label: 'People', wide: true }, 'Queue', { label: 'Last error', wide: true }, { label: 'Change', quiet: true }],
                  targets.map(
                    (x: ScimTargetView) =>
                      html`<tr>
                        <td>${x.name}<br /><span class="meta">${x.url}</span><br /><span class="meta">${x.groups.join(', ') || 'everyone'}</span></td>
                        <td class="wide-only">${count(x.users, 'person', 'people')}, ${count(x.group_count, 'group', 'groups')}</td>
                        <td>${x.pending === 0 && x.failed === 0 ? 'up to date' : `${x.pending} pending, ${x.failed} failed`}</td>
                        <td class="wide-only">${x.last_error ?? '-'}</td>
                        <td class="actions">
                          ${actionButton(a.csrf, '/admin/provisioning/sync', 'Sync', { hidden: { id: x.id } })}
                          ${
                            managed.of('scim_target', x.name) !== null
                              ? managedNote(managed.of('scim_target', x.name)!)
                              : actionButton(a.csrf, '/admin/provisioning/remove-target', 'Remove', { hidden: { id: x.id }, confirm: `Remove ${x.name}` })
                          }
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-target">
          <h2 id="h-new-target">Provision an app</h2>
          <form method="post" action="/admin/provisioning/targets">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('url', "The app's SCIM base URL", { type: 'url', autocomplete: 'off', hint: 'https://app.example.com/scim/v2' })}
            ${field('token', "The app's token", { type: 'password', autocomplete: 'off', hint: 'Sent as its Bearer token; never shown again.' })}
            ${field('target_name', 'Name', { maxlength: 64, autocomplete: 'off', required: false, hint: 'How it is listed (the URL host when empty).' })}
            ${await groupChoices(kit, a, 'groups', 'Push only the members of these groups, and the groups (none ticked: everyone)')}
            <button type="submit">Add and sync</button>
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
          <h2 id="h-token">The SCIM token for ${made.name}</h2>
          <p>Copy it now into the service's provisioning settings, with the base URL below: it is shown only this once.</p>
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

/**
 * The console's SCIM tokens: make one for a provisioning service (shown once, on the page that
 * answers its creation), see each token's last use, revoke one. The shell's operations.
 */
import type { Context } from 'koa';
import type { ScimTokenView } from '../../../core';
import { field, html, type Html } from '../html';
import { type PageKit, str } from '../kit';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, dataTable } from './kit';

export function registerConsoleScim(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const scimPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const tokens = await core.scim.listTokens(a.actor);
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
        </section>`,
      o,
    );
  };

  c.get('/admin/provisioning', 'provisioning', scimPage);
  // Creation answers a page (not a redirect): the token is in this answer only.
  kit.post('/admin/provisioning', async (ctx) => {
    await c.run(ctx, scimPage, async (a, body) => {
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
    '/admin/provisioning/revoke',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.scim.revokeToken(a.actor, str(body, 'id'));
      return '/admin/provisioning?done=scim_token_revoked';
    },
    scimPage,
  );
}

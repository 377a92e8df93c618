/**
 * The console's SAML service providers: add one by pasting its metadata (or by entity id and ACS
 * URL), whether it needs two factors, see and remove them, start a sign-in to one from here (IdP-initiated), and the signing
 * certificate with its rotation. Every button is the shell's operation.
 */
import type { Context } from 'koa';
import type { NameIdKind, SamlCertView, SamlSpView } from '../../../core';
import { lazyKoaBody } from '../../body';
import { breakable, field, html } from '../html';
import { type PageKit, str } from '../kit';
import { assertSameSite } from '../session';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, dataTable, managedNote, onOff } from './kit';
import { groupChoices, many } from './people';

const NAMEID_WORDS: Record<NameIdKind, string> = {
  email: 'email address',
  persistent: 'persistent pseudonym (per app)',
  username: 'username',
};

export function registerConsoleSaml(kit: PageKit, c: ConsoleKit): void {
  const { core, router, names, html_ } = kit;

  const samlPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const [sps, managed] = await Promise.all([core.saml.listSps(a.actor), core.configFile.managedBy(a.actor)]);
    const certs = await core.saml.listCerts(a.actor);
    const metadataUrl = `${core.config.publicUrl}/saml/metadata`;
    c.show(
      ctx,
      a,
      'saml',
      'SAML apps',
      html`<section>
          <p>
            Give each app Gatehouse's metadata: <a href="/saml/metadata"><code>${breakable(metadataUrl)}</code></a> (its entity id too).
          </p>
          ${
            sps.length === 0
              ? html`<p>No SAML apps yet.</p>`
              : dataTable(
                  [
                    'Name',
                    { label: 'Entity id', wide: true },
                    'NameID',
                    { label: 'ACS URL', wide: true },
                    { label: 'Allowed groups', wide: true },
                    'Two factors',
                    { label: 'Change', quiet: true },
                  ],
                  sps.map(
                    (sp: SamlSpView) =>
                      html`<tr>
                        <td>${sp.name}</td>
                        <td class="wide-only"><code>${breakable(sp.entity_id)}</code></td>
                        <td>${NAMEID_WORDS[sp.nameid]}</td>
                        <td class="wide-only">${sp.acs_urls.map((u, i) => html`${i ? html`<br />` : ''}${breakable(u)}`)}</td>
                        <td class="wide-only">${sp.allowed_groups.join(', ') || 'everyone'}</td>
                        <td>${sp.two_factor ? 'required' : 'no'}</td>
                        <td class="actions">
                          ${actionButton(a.csrf, `/saml/start/${sp.id}`, 'Sign in', { aria: `Sign in to ${sp.name}` })}
                          ${
                            managed.of('saml_sp', sp.entity_id) !== null
                              ? managedNote(managed.of('saml_sp', sp.entity_id)!)
                              : html`${actionButton(a.csrf, '/admin/saml/two-factor', sp.two_factor ? 'Allow one factor' : 'Require two factors', {
                                  hidden: { id: sp.id, two_factor: sp.two_factor ? 'off' : 'on' },
                                  aria: `${sp.two_factor ? 'Allow one factor for' : 'Require two factors for'} ${sp.name}`,
                                })}
                                ${actionButton(a.csrf, '/admin/saml/remove', 'Remove', { hidden: { id: sp.id }, confirm: `Remove ${sp.name}` })}`
                          }
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-sp">
          <h2 id="h-new-sp">New SAML app</h2>
          <form method="post" action="/admin/saml">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            <div class="field">
              <label for="f-metadata">The app's metadata</label>
              <textarea id="f-metadata" name="metadata" rows="6" aria-describedby="f-metadata-hint" spellcheck="false"></textarea>
              <small id="f-metadata-hint"
                >Paste the XML the app publishes (its entity id, ACS URL and certificate come from it). Or leave it empty and fill in the two fields
                below.</small
              >
            </div>
            ${field('entity_id', 'Entity id (without metadata)', { required: false, autocomplete: 'off', maxlength: 1000 })}
            ${field('acs_url', 'ACS URL (without metadata)', { required: false, autocomplete: 'off', maxlength: 1000, hint: 'Where the app receives the Response (HTTP-POST).' })}
            ${field('name', 'Name', { required: false, maxlength: 100, autocomplete: 'off', hint: 'What people see; the entity id when empty.' })}
            <div class="field">
              <label for="f-nameid">NameID</label>
              <select id="f-nameid" name="nameid">
                ${(Object.keys(NAMEID_WORDS) as NameIdKind[]).map((k) => html`<option value="${k}">${NAMEID_WORDS[k]}</option>`)}
              </select>
            </div>
            ${await groupChoices(kit, a, 'groups', 'Only members of these groups may sign in (none ticked: everyone)')}
            <div class="field">
              <label class="check"
                ><input type="checkbox" name="two_factor" value="yes" aria-describedby="f-two-factor-hint" /> Require two factors (TOTP or a passkey)</label
              >
              <small id="f-two-factor-hint"
                >A password alone is not enough: people are asked for their second factor first, and accounts without one cannot sign in to it.</small
              >
            </div>
            <button type="submit">Add SAML app</button>
          </form>
        </section>
        <section aria-labelledby="h-certs">
          <h2 id="h-certs">Signing certificate</h2>
          ${dataTable(
            ['Status', { label: 'SHA-256 fingerprint', wide: true }, 'Expires'],
            certs.map(
              (x: SamlCertView) =>
                html`<tr>
                  <td>${x.status === 'current' ? 'signs now' : 'next (listed in metadata)'}</td>
                  <td class="wide-only"><code>${x.fingerprint_sha256}</code></td>
                  <td>${x.not_after.slice(0, 10)}</td>
                </tr>`,
            ),
          )}
          <div class="links">
            ${
              certs.length === 1
                ? actionButton(a.csrf, '/admin/saml/rotate', 'Add the next certificate', { confirm: 'List a new certificate beside the current one' })
                : actionButton(a.csrf, '/admin/saml/retire', 'Retire the current certificate', {
                    confirm: 'Sign with the next one from now on (apps pinning the old one stop working)',
                  })
            }
          </div>
        </section>`,
      o,
    );
  };

  c.get('/admin/saml', 'saml', samlPage);
  // Metadata can be larger than the pages' other forms: this form takes up to 256 KiB.
  const parseLarge = lazyKoaBody({ urlencoded: true, json: false, multipart: false, text: false, formLimit: '256kb' });
  router.post('/admin/saml', html_, parseLarge, async (ctx) => {
    assertSameSite(ctx, names, core.config.publicUrl, str(ctx.request.body, 'csrf'));
    await c.run(ctx, samlPage, async (a, body) => {
      const metadata = str(body, 'metadata').trim();
      const entityId = str(body, 'entity_id').trim();
      const acsUrl = str(body, 'acs_url').trim();
      const added = await core.saml.addSp(a.actor, {
        ...(metadata ? { metadata } : {}),
        ...(entityId ? { entityId } : {}),
        ...(acsUrl ? { acsUrl } : {}),
        name: str(body, 'name').trim() || undefined,
        nameid: (str(body, 'nameid') || 'email') as NameIdKind,
        allowedGroups: many(body, 'groups'),
        twoFactor: str(body, 'two_factor') === 'yes',
      });
      ctx.status = 303;
      ctx.redirect(`/admin/saml?done=saml_added&sp=${encodeURIComponent(added.id)}`);
    });
  });
  c.post(
    '/admin/saml/two-factor',
    async (_ctx, a, body) => {
      await core.saml.setSpTwoFactor(a.actor, str(body, 'id'), onOff(str(body, 'two_factor')));
      return '/admin/saml?done=saml_changed';
    },
    samlPage,
  );
  c.post(
    '/admin/saml/remove',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.saml.removeSp(a.actor, str(body, 'id'));
      return '/admin/saml?done=saml_removed';
    },
    samlPage,
  );
  c.post(
    '/admin/saml/rotate',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.saml.rotateCert(a.actor);
      return '/admin/saml?done=saml_rotated';
    },
    samlPage,
  );
  c.post(
    '/admin/saml/retire',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.saml.retireCert(a.actor);
      return '/admin/saml?done=saml_retired';
    },
    samlPage,
  );
}

/**
 * The console's SAML service providers: add one by pasting its metadata (or by entity id and ACS
 * URL), whether it needs two factors, see and remove them, start a sign-in to one from here (IdP-initiated), and the signing
 * certificate with its rotation. Every button is the shell's operation.
 */
import type { Context } from 'koa';
import type { MessageKey, NameIdKind, SamlCertView, SamlSpView } from '../../../core';
import { lazyKoaBody } from '../../body';
import { breakable, field, html, tm } from '../html';
import { t } from '../look';
import { type PageKit, str } from '../kit';
import { assertSameSite } from '../session';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, data, dataTable, managedNote, onOff, when } from './kit';
import { groupChoices, many } from './people';

const NAMEID_WORDS: Record<NameIdKind, MessageKey> = {
  email: 'admin.saml.nameid.email',
  persistent: 'admin.saml.nameid.persistent',
  username: 'admin.saml.nameid.username',
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
      t('admin.nav.saml'),
      html`<section>
          <p>${tm('admin.saml.intro', { url: html`<a href="/saml/metadata"><code>${breakable(metadataUrl)}</code></a>` })}</p>
          ${
            sps.length === 0
              ? html`<p>${t('admin.saml.none')}</p>`
              : dataTable(
                  [
                    t('admin.name'),
                    { label: t('admin.saml.entity_id'), wide: true },
                    t('admin.saml.nameid'),
                    { label: t('admin.saml.acs_url'), wide: true },
                    { label: t('admin.allowed_groups'), wide: true },
                    t('admin.two_factors'),
                    { label: t('admin.change'), quiet: true },
                  ],
                  sps.map(
                    (sp: SamlSpView) =>
                      html`<tr>
                        <td translate="no">${sp.name}</td>
                        <td class="wide-only"><code>${breakable(sp.entity_id)}</code></td>
                        <td>${t(NAMEID_WORDS[sp.nameid])}</td>
                        <td class="wide-only">${sp.acs_urls.map((u, i) => html`${i ? html`<br />` : ''}${breakable(u)}`)}</td>
                        <td class="wide-only">
                          ${sp.allowed_groups.length === 0 ? t('admin.everyone') : sp.allowed_groups.map((g, i) => html`${i > 0 ? ', ' : ''}${data(g)}`)}
                        </td>
                        <td>${t(sp.two_factor ? 'admin.required' : 'admin.no')}</td>
                        <td class="actions">
                          ${actionButton(a.csrf, `/saml/start/${sp.id}`, t('admin.saml.sign_in'), { aria: t('admin.saml.sign_in_aria', { name: sp.name }) })}
                          ${
                            managed.of('saml_sp', sp.entity_id) !== null
                              ? managedNote(managed.of('saml_sp', sp.entity_id)!)
                              : html`${actionButton(
                                  a.csrf,
                                  '/admin/saml/two-factor',
                                  t(sp.two_factor ? 'admin.allow_one_factor' : 'admin.require_two_factors'),
                                  {
                                    hidden: { id: sp.id, two_factor: sp.two_factor ? 'off' : 'on' },
                                    aria: t(sp.two_factor ? 'admin.saml.allow_one_factor_aria' : 'admin.saml.require_two_factors_aria', { name: sp.name }),
                                  },
                                )}
                                ${actionButton(a.csrf, '/admin/saml/remove', t('admin.remove'), {
                                  hidden: { id: sp.id },
                                  confirm: tm('admin.remove_confirm', { name: data(sp.name) }),
                                })}`
                          }
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-sp">
          <h2 id="h-new-sp">${t('admin.saml.new')}</h2>
          <form method="post" action="/admin/saml">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            <div class="field">
              <label for="f-metadata">${t('admin.saml.metadata')}</label>
              <textarea id="f-metadata" name="metadata" rows="6" aria-describedby="f-metadata-hint" spellcheck="false"></textarea>
              <small id="f-metadata-hint">${t('admin.saml.metadata_hint')}</small>
            </div>
            ${field('entity_id', t('admin.saml.entity_id_label'), { required: false, autocomplete: 'off', maxlength: 1000 })}
            ${field('acs_url', t('admin.saml.acs_url_label'), { required: false, autocomplete: 'off', maxlength: 1000, hint: t('admin.saml.acs_url_hint') })}
            ${field('name', t('admin.name'), { required: false, maxlength: 100, autocomplete: 'off', hint: t('admin.saml.name_hint') })}
            <div class="field">
              <label for="f-nameid">${t('admin.saml.nameid')}</label>
              <select id="f-nameid" name="nameid">
                ${(Object.keys(NAMEID_WORDS) as NameIdKind[]).map((k) => html`<option value="${k}">${t(NAMEID_WORDS[k])}</option>`)}
              </select>
            </div>
            ${await groupChoices(kit, a, 'groups', t('admin.clients.groups'))}
            <div class="field">
              <label class="check"
                ><input type="checkbox" name="two_factor" value="yes" aria-describedby="f-two-factor-hint" /> ${t('admin.saml.two_factor')}</label
              >
              <small id="f-two-factor-hint">${t('admin.saml.two_factor_hint')}</small>
            </div>
            <button type="submit">${t('admin.saml.add')}</button>
          </form>
        </section>
        <section aria-labelledby="h-certs">
          <h2 id="h-certs">${t('admin.saml.certificate')}</h2>
          ${dataTable(
            [t('admin.saml.status'), { label: t('admin.saml.fingerprint'), wide: true }, t('admin.account.expires')],
            certs.map(
              (x: SamlCertView) =>
                html`<tr>
                  <td>${t(x.status === 'current' ? 'admin.saml.cert_current' : 'admin.saml.cert_next')}</td>
                  <td class="wide-only"><code>${x.fingerprint_sha256}</code></td>
                  <td>${when(x.not_after)}</td>
                </tr>`,
            ),
          )}
          <div class="links">
            ${
              certs.length === 1
                ? actionButton(a.csrf, '/admin/saml/rotate', t('admin.saml.rotate'), { confirm: t('admin.saml.rotate_confirm') })
                : actionButton(a.csrf, '/admin/saml/retire', t('admin.saml.retire'), { confirm: t('admin.saml.retire_confirm') })
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

/**
 * The console's directory sources (LDAP, Active Directory): each source with what it holds, its
 * schedule and its last sync (the error when it failed), and a button that syncs it now, whose
 * report (counts, and the entries left out with the reason) answers the post. Adding and removing
 * a source stay in the shell: the page says how. The shell's `source list` and `source sync`.
 */
import type { Context } from 'koa';
import type { SourceView, SyncReport } from '../../../core';
import { escape, html, type Html, raw, tm } from '../html';
import { look, t } from '../look';
import { type PageKit, str } from '../kit';
import { actionButton, type Admin, type ConsoleKit, counted, data, dataTable, when } from './kit';

/**
 * A time whose parts (date, year, time of day: what the locale writes between commas) each stay
 * on one line: a narrow column breaks it only between them.
 */
const date = (iso: string): Html => {
  const parts = when(iso).split(', ');
  return html`${parts.map((part, i) => html`${i > 0 ? ' ' : ''}<span class="when">${part}${i < parts.length - 1 ? ',' : ''}</span>`)}`;
};

/** A figure in the reader's way of writing numbers. */
const n = (value: number): string => look().tr.number(value);

/**
 * A DN (or a URL) that wraps after a comma when the space is short, never inside an attribute's
 * value unless it alone is wider than the space: a narrow column keeps `dc=example` whole.
 */
const dn = (text: string): Html =>
  raw(
    `<span class="url">${text
      .split(/(?<=,)/)
      .map(escape)
      .join('<wbr>')}</span>`,
  );

/** How a source is added, one option a line (a shell joins the lines at their backslashes). */
const ADD_COMMAND =
  'gatehouse source add ldap --name corp --url ldaps://dc.example.com --bind-dn cn=gatehouse,dc=example,dc=com --bind-password-stdin --base-dn dc=example,dc=com --every 1h'
    .split(' --')
    .map((part, i, all) => `${i === 0 ? '' : '--'}${part}${i < all.length - 1 ? ' \\' : ''}`);

/** The first letter up: a core message shown as a sentence of its own. */
const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** The core names a shell flag in a reason as {--flag}: the page shows the name alone. */
const plain = (text: string) => text.replace(/\{--([\w-]+)\}/g, '$1');

/** A figure of the last sync as stored (a number, or absent when the report had no such figure). */
const figure = (result: unknown, kind: string, key: string): number => {
  const part = (result as Record<string, unknown> | null)?.[kind];
  const n = (part as Record<string, unknown> | undefined)?.[key];
  return typeof n === 'number' ? n : 0;
};

function lastSync(v: SourceView): Html {
  if (v.last_sync_at === null) return html`${t('admin.never')}`;
  if (v.last_status === 'failed') {
    const error = (v.last_result as { error?: unknown } | null)?.error;
    return html`<strong class="failed">${t('admin.sources.failed')}</strong>
      ${date(v.last_sync_at)}<br />${typeof error === 'string' ? sentence(plain(error)) : t('admin.sources.no_reason')}`;
  }
  const r = v.last_result;
  const skipped = typeof (r as { skipped?: unknown } | null)?.skipped === 'number' ? (r as { skipped: number }).skipped : 0;
  return html`${tm('admin.sources.ok', { when: date(v.last_sync_at) })}<br /><span class="meta"
      >${t('admin.sources.last_figures', {
        created: n(figure(r, 'people', 'created')),
        updated: n(figure(r, 'people', 'updated')),
        disabled: n(figure(r, 'people', 'disabled')),
        skipped: n(skipped),
      })}</span
    >`;
}

/**
 * The report of a sync just run: every figure, and each entry left out with the reason. The list
 * is the one count of what was left out (the per-kind figures count only what failed to be
 * written, not what could not be read: a person with no mail).
 */
function syncReport(name: string, r: SyncReport): Html {
  const skipped =
    r.skipped.length === 0
      ? html`<p id="report-skipped">${t('admin.sources.nothing_skipped')}</p>`
      : html`<h3 id="report-skipped">
            ${t('admin.sources.skipped', {
              entries: r.skipped.length === 100 ? t('admin.sources.first_entries', { n: n(100) }) : counted('admin.count.entries', r.skipped.length),
            })}
          </h3>
          ${dataTable(
            [t('admin.sources.entry'), t('admin.sources.why')],
            r.skipped.map(
              (x) =>
                html`<tr>
                  <td><code>${dn(x.dn)}</code></td>
                  <td translate="no">${plain(x.reason)}</td>
                </tr>`,
            ),
          )}`;
  return html`<section aria-labelledby="h-synced" id="sync-report">
    <h2 id="h-synced">${tm('admin.sources.synced', { name: data(name) })}</h2>
    <p class="notice success" role="status">${t('admin.sources.synced_text')}</p>
    <dl>
      <dt>${t('admin.scim.people')}</dt>
      <dd id="report-people">
        ${t('admin.sources.report_people', {
          created: n(r.people.created),
          updated: n(r.people.updated),
          unchanged: n(r.people.unchanged),
          disabled: n(r.people.disabled),
          enabled: n(r.people.enabled),
        })}
      </dd>
      <dt>${t('admin.nav.groups')}</dt>
      <dd id="report-groups">
        ${t('admin.sources.report_groups', { created: n(r.groups.created), renamed: n(r.groups.renamed), removed: n(r.groups.removed) })}
      </dd>
      <dt>${t('admin.group.members')}</dt>
      <dd>${t('admin.sources.report_changes', { added: n(r.members.added), removed: n(r.members.removed) })}</dd>
      <dt>${t('admin.sources.inner_groups')}</dt>
      <dd>${t('admin.sources.report_changes', { added: n(r.nestings.added), removed: n(r.nestings.removed) })}</dd>
    </dl>
    ${skipped}
  </section>`;
}

export function registerConsoleSources(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const sourcesPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const sources = await core.sources.list(a.actor);
    c.show(
      ctx,
      a,
      'sources',
      t('admin.nav.sources'),
      html`${o.top ?? ''}
        <section>
          <p>${t('admin.sources.intro')}</p>
          ${
            sources.length === 0
              ? html`<p>${t('admin.sources.none')}</p>`
              : dataTable(
                  [
                    t('admin.sources.source'),
                    t('admin.scim.people'),
                    t('admin.sources.gone'),
                    t('admin.nav.groups'),
                    t('admin.sources.schedule'),
                    t('admin.sources.last_sync'),
                    { label: t('admin.scim.sync'), quiet: true },
                  ],
                  sources.map(
                    (v) =>
                      html`<tr>
                        <td>
                          ${data(v.name)}<br /><span class="meta" translate="no">${dn(v.url)}${v.start_tls ? ' (StartTLS)' : ''}<br />${dn(v.base_dn)}</span>
                        </td>
                        <td>${n(v.people)}</td>
                        <td>${n(v.gone)}</td>
                        <td>${n(v.groups)}</td>
                        <td>
                          ${v.every === null ? t('admin.sources.on_demand') : tm('admin.sources.every', { interval: html`<code>${v.every}</code>` })}${
                            v.next_sync_at === null || v.every === null
                              ? ''
                              : html`<br /><span class="meta">${tm('admin.sources.next', { when: date(v.next_sync_at) })}</span>`
                          }
                        </td>
                        <td>${lastSync(v)}</td>
                        <td class="actions">
                          ${actionButton(a.csrf, '/admin/sources/sync', t('admin.sources.sync_now'), {
                            hidden: { source: v.name },
                            aria: t('admin.sources.sync_now_aria', { name: v.name }),
                          })}
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-shell">
          <h2 id="h-shell">${t('admin.sources.shell_title')}</h2>
          <p>${t('admin.sources.shell_intro')}</p>
          <p class="command"><code>${raw(ADD_COMMAND.map((line) => dn(line).html).join('<br />'))}</code></p>
          <p class="meta">
            ${tm('admin.sources.shell_ad', {
              ad: html`<code>gatehouse source add ldap &hellip; --uid-attribute sAMAccountName</code>`,
              help: html`<code>gatehouse source add --help</code>`,
            })}
          </p>
          <p>${tm('admin.sources.shell_remove', { command: html`<code>gatehouse source remove NAME</code>` })}</p>
        </section>`,
      o,
    );
  };

  c.get('/admin/sources', 'sources', sourcesPage);
  // A sync answers a page (not a redirect): the entries it left out, and why, are in this answer only.
  kit.post('/admin/sources/sync', async (ctx) => {
    await c.run(ctx, sourcesPage, async (a, body) => {
      const name = str(body, 'source');
      const report = await core.sources.sync(a.actor, name);
      return sourcesPage(ctx, a, { top: syncReport(name, report) });
    });
  });
}

/**
 * The console's directory sources (LDAP, Active Directory): each source with what it holds, its
 * schedule and its last sync (the error when it failed), and a button that syncs it now, whose
 * report (counts, and the entries left out with the reason) answers the post. Adding and removing
 * a source stay in the shell: the page says how. The shell's `source list` and `source sync`.
 */
import type { Context } from 'koa';
import type { SourceView, SyncReport } from '../../../core';
import { escape, html, type Html, raw } from '../html';
import { type PageKit, str } from '../kit';
import { actionButton, type Admin, type ConsoleKit, dataTable } from './kit';

/** A time, kept on one line (a narrow column broke it at the date's dashes). */
const date = (iso: string): Html => html`<span class="when">${iso.replace('T', ' ').slice(0, 16)}</span>`;

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
  if (v.last_sync_at === null) return html`never`;
  if (v.last_status === 'failed') {
    const error = (v.last_result as { error?: unknown } | null)?.error;
    return html`<strong class="failed">failed</strong>
      ${date(v.last_sync_at)}<br />${typeof error === 'string' ? sentence(plain(error)) : 'No reason was kept.'}`;
  }
  const r = v.last_result;
  const skipped = typeof (r as { skipped?: unknown } | null)?.skipped === 'number' ? (r as { skipped: number }).skipped : 0;
  return html`ok ${date(v.last_sync_at)}<br /><span class="meta"
      >${figure(r, 'people', 'created')} created, ${figure(r, 'people', 'updated')} updated, ${figure(r, 'people', 'disabled')} disabled, ${skipped} left
      out</span
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
      ? html`<p id="report-skipped">Nothing was left out.</p>`
      : html`<h3 id="report-skipped">
            Left out: ${r.skipped.length === 100 ? 'the first 100 entries' : r.skipped.length === 1 ? '1 entry' : `${r.skipped.length} entries`}
          </h3>
          ${dataTable(
            ['Entry', 'Why'],
            r.skipped.map(
              (x) =>
                html`<tr>
                  <td><code>${dn(x.dn)}</code></td>
                  <td>${plain(x.reason)}</td>
                </tr>`,
            ),
          )}`;
  return html`<section aria-labelledby="h-synced" id="sync-report">
    <h2 id="h-synced">${name} is synced</h2>
    <p class="notice success" role="status">The directory was read whole, and this server now holds what it says.</p>
    <dl>
      <dt>People</dt>
      <dd id="report-people">
        ${r.people.created} created, ${r.people.updated} updated, ${r.people.unchanged} unchanged, ${r.people.disabled} disabled (gone), ${r.people.enabled}
        back
      </dd>
      <dt>Groups</dt>
      <dd id="report-groups">${r.groups.created} created, ${r.groups.renamed} renamed, ${r.groups.removed} removed</dd>
      <dt>Members</dt>
      <dd>${r.members.added} added, ${r.members.removed} removed</dd>
      <dt>Inner groups</dt>
      <dd>${r.nestings.added} added, ${r.nestings.removed} removed</dd>
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
      'Directory sources',
      html`${o.top ?? ''}
        <section>
          <p>
            People and groups synced in from LDAP or Active Directory. What a source brings is the directory's: people's names, email addresses, usernames and
            passwords, and groups' names, members and inner groups are changed there. A person gone from the directory is disabled here, not deleted; a group
            gone is removed.
          </p>
          ${
            sources.length === 0
              ? html`<p>No directory sources yet: nobody is synced in from LDAP or Active Directory.</p>`
              : dataTable(
                  ['Source', 'People', 'Gone (disabled)', 'Groups', 'Schedule', 'Last sync (UTC)', { label: 'Sync', quiet: true }],
                  sources.map(
                    (v) =>
                      html`<tr>
                        <td>
                          ${v.name}<br /><span class="meta">${dn(v.url)}${v.start_tls ? ' (StartTLS)' : ''}<br />${dn(v.base_dn)}</span>
                        </td>
                        <td>${v.people}</td>
                        <td>${v.gone}</td>
                        <td>${v.groups}</td>
                        <td>
                          ${v.every === null ? 'on demand' : `every ${v.every}`}${
                            v.next_sync_at === null || v.every === null ? '' : html`<br /><span class="meta">next ${date(v.next_sync_at)}</span>`
                          }
                        </td>
                        <td>${lastSync(v)}</td>
                        <td class="actions">
                          ${actionButton(a.csrf, '/admin/sources/sync', 'Sync now', { hidden: { source: v.name }, aria: `Sync now: ${v.name}` })}
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-shell">
          <h2 id="h-shell">Adding and removing a source</h2>
          <p>In the shell, on the server. Adding checks that the directory answers and accepts the bind; the password is read from standard input:</p>
          <p class="command"><code>${raw(ADD_COMMAND.map((line) => dn(line).html).join('<br />'))}</code></p>
          <p class="meta">
            Active Directory: <code>gatehouse source add ldap &hellip; --uid-attribute sAMAccountName</code>. Every option:
            <code>gatehouse source add --help</code>.
          </p>
          <p><code>gatehouse source remove NAME</code> stops syncing: the people and groups it brought stay, as this server's own.</p>
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

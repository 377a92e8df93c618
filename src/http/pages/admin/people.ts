/** The console's invitations and groups: invite by mail, withdraw an invitation; managed groups, their members. */
import type { Context } from 'koa';
import { field, html, type Html, tm } from '../html';
import { look, t } from '../look';
import { type PageKit, str } from '../kit';
import { recentOrConfirm } from '../confirm';
import type { GroupDetail } from '../../../core';
import { actionButton, type Admin, assertConfirmed, confirmBox, type ConsoleKit, counted, data, dataTable, when, yesNo } from './kit';

/** How long an invitation's link works, as the form offers it (7 days unless chosen). */
const LIFETIMES: Readonly<Record<string, number>> = { '1d': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };

/** Form values that may repeat (checkboxes): always a list of strings. */
export const many = (body: unknown, key: string): string[] => {
  const v = (body as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
};

/** Checkboxes of the managed groups (the only ones that can grant access). */
export async function groupChoices(kit: PageKit, a: Admin, name: string, legend: string) {
  const groups = (await kit.core.groups.managed(a.actor)).filter((g) => g.system_role === null);
  if (groups.length === 0)
    return html`<p class="meta">${tm('admin.groups.none_yet', { link: html`<a href="/admin/groups">${t('admin.groups.make_one')}</a>` })}</p>`;
  return html`<fieldset>
    <legend>${legend}</legend>
    ${groups.map((g) => html`<label class="check"><input type="checkbox" name="${name}" value="${g.reference_id}" /> ${data(g.name)}</label>`)}
  </fieldset>`;
}

/** A group's members counted both ways: directly in it, and in all with the groups inside it. */
function memberCounts(g: GroupDetail): Html {
  const direct = { people: html`${counted('admin.count.people', g.member_count)}`, group: data(g.name) };
  if (g.groups.length === 0) return tm('admin.group.counts_direct', direct);
  return tm('admin.group.counts_all', { ...direct, all: html`${counted('admin.count.people', g.all_member_count)}` });
}

export function registerConsolePeople(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const invitationsPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const open = await core.invitations.list(a.actor);
    c.show(
      ctx,
      a,
      'invitations',
      t('admin.nav.invitations'),
      html`${o.top ?? ''}
        <section aria-labelledby="h-invite">
          <h2 id="h-invite">${t('admin.invitations.invite')}</h2>
          <p>${t('admin.invitations.intro')}</p>
          <form method="post" action="/admin/invitations">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('email', t('admin.email'), { type: 'email', autocomplete: 'off' })} ${await groupChoices(kit, a, 'groups', t('admin.invitations.groups'))}
            <label class="check"><input type="checkbox" name="administrator" value="yes" /> ${t('admin.invitations.administrator')}</label>
            <div class="field">
              <label for="f-expires">${t('admin.invitations.expires')}</label>
              <select id="f-expires" name="expires">
                ${Object.entries(LIFETIMES).map(
                  ([value, seconds]) => html`<option value="${value}" ${value === '7d' ? 'selected' : ''}>${look().tr.duration(seconds)}</option>`,
                )}
              </select>
            </div>
            <button type="submit">${t('admin.invitations.send')}</button>
          </form>
        </section>
        <section aria-labelledby="h-open">
          <h2 id="h-open">${t('admin.invitations.open')}</h2>
          ${
            open.length === 0
              ? html`<p>${t('admin.none')}</p>`
              : html`${dataTable(
                  [
                    t('admin.email'),
                    t('admin.nav.groups'),
                    t('admin.account.administrator'),
                    t('admin.account.expires'),
                    { label: t('admin.invitations.withdraw'), quiet: true },
                  ],
                  open.map(
                    (i) =>
                      html`<tr>
                        <td translate="no">${i.email}</td>
                        <td translate="no">${i.groups.join(', ') || '-'}</td>
                        <td>${yesNo(i.administrator)}</td>
                        <td>${when(i.expires_at)}</td>
                        <td class="actions">
                          ${actionButton(a.csrf, '/admin/invitations/revoke', t('admin.invitations.withdraw'), {
                            hidden: { id: i.id },
                            aria: t('admin.invitations.withdraw_aria', { email: i.email }),
                          })}
                        </td>
                      </tr>`,
                  ),
                )}`
          }
        </section>`,
      o,
    );
  };
  c.get('/admin/invitations', 'invitations', invitationsPage);
  // Inviting answers a page (not a redirect): the link is in this answer only, to copy when no
  // mail reaches the person (and always said: without SMTP the mail is only a file in the outbox).
  kit.post('/admin/invitations', async (ctx) => {
    await c.run(ctx, invitationsPage, async (a, body) => {
      // An invitation is a way in for someone: after a recent sign-in, or confirm it is you first.
      if (!(await recentOrConfirm(ctx, core, a, '/admin/invitations'))) return;
      const expires = Object.hasOwn(LIFETIMES, str(body, 'expires')) ? LIFETIMES[str(body, 'expires')] : LIFETIMES['7d'];
      const r = await core.invitations.invite(a.actor, {
        email: str(body, 'email'),
        groups: many(body, 'groups'),
        administrator: str(body, 'administrator') === 'yes',
        expiresInSeconds: expires,
      });
      const mail =
        r.mail.via === 'smtp'
          ? html`<p>${tm('admin.invitations.mailed', { server: html`<code>${r.mail.to}</code>` })}</p>`
          : html`<p><strong>${t('admin.invitations.not_mailed')}</strong> ${tm('admin.invitations.outbox', { folder: html`<code>${r.mail.to}</code>` })}</p>`;
      return invitationsPage(ctx, a, {
        top: html`<section aria-labelledby="h-invited" class="notice success">
          <h2 id="h-invited">${tm('admin.invitations.invited', { email: data(r.invitation.email) })}</h2>
          ${mail}
          <label for="invitation-link">${t('admin.invitations.link', { until: when(r.invitation.expires_at) })}</label>
          <input id="invitation-link" class="secret-once" type="text" readonly value="${r.link}" />
        </section>`,
      });
    });
  });
  c.post(
    '/admin/invitations/revoke',
    async (_ctx, a, body) => {
      await core.invitations.revoke(a.actor, str(body, 'id'));
      return '/admin/invitations?done=invitation_revoked';
    },
    invitationsPage,
  );

  // ---- Groups ----------------------------------------------------------------------------------
  const groupsPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const groups = await core.groups.managed(a.actor);
    c.show(
      ctx,
      a,
      'groups',
      t('admin.nav.groups'),
      html`<section>
          <p>${tm('admin.groups.intro', { claim: html`<code>groups</code>` })}</p>
          ${dataTable(
            [t('admin.name'), t('admin.groups.direct'), t('admin.groups.all'), t('admin.created')],
            groups.map(
              (g) =>
                html`<tr>
                  <td>
                    <a href="/admin/groups/${g.reference_id}" translate="no">${g.name}</a>${
                      g.system_role ? html` <span class="meta">${t('admin.groups.built_in')}</span>` : ''
                    }
                  </td>
                  <td>${look().tr.number(g.member_count)}</td>
                  <td>${look().tr.number(g.all_member_count)}</td>
                  <td>${when(g.created_at)}</td>
                </tr>`,
            ),
          )}
        </section>
        <section aria-labelledby="h-new-group">
          <h2 id="h-new-group">${t('admin.groups.new')}</h2>
          <form method="post" action="/admin/groups">
            <input type="hidden" name="csrf" value="${a.csrf}" />${field('name', t('admin.name'), { maxlength: 100, autocomplete: 'off' })}
            <button type="submit">${t('admin.groups.create')}</button>
          </form>
        </section>`,
      o,
    );
  };
  c.get('/admin/groups', 'groups', groupsPage);
  c.post(
    '/admin/groups',
    async (_ctx, a, body) => {
      const g = await core.groups.create(a.actor, { name: str(body, 'name') });
      return `/admin/groups/${g.reference_id}?done=group_created`;
    },
    groupsPage,
  );

  /**
   * The groups inside this one (each with Remove), a form to put a managed group inside it, and
   * the groups it is inside. The choice leaves out only what cannot be meant (this group, `users`,
   * the ones already inside); a cycle or a chain too deep is the core's to refuse, and its answer
   * shows on this page. administrators takes no group (the core refuses it): no form, one line why.
   * `fixed`: a configuration file or a directory source says which groups are inside it (no form, no Remove).
   */
  const nestedSection = async (a: Admin, g: GroupDetail, base: string, fixed: boolean): Promise<Html> => {
    const links = (list: GroupDetail['member_of']) =>
      list.map((x, i) => html`${i > 0 ? ', ' : ''}<a href="/admin/groups/${x.reference_id}" translate="no">${x.name}</a>`);
    const insideOf = html`<section aria-labelledby="h-inside-of">
      <h2 id="h-inside-of">${t('admin.group.inside_of')}</h2>
      <p id="group-inside-of">
        ${
          g.member_of.length > 0
            ? tm('admin.group.inside_of_text', { groups: html`${links(g.member_of)}`, group: data(g.name) })
            : g.system_role === 'users'
              ? tm('admin.group.users_inside_none', { group: data(g.name) })
              : t('admin.group.inside_none')
        }
      </p>
    </section>`;
    if (g.system_role === 'administrators') {
      return html`<section aria-labelledby="h-nested">
          <h2 id="h-nested">${t('admin.group.nested')}</h2>
          <p>${tm('admin.group.administrators_nested', { group: data(g.name) })}</p>
        </section>
        ${insideOf}`;
    }
    const inside = new Set(g.groups.map((x) => x.reference_id));
    const choices = (await core.groups.managed(a.actor)).filter(
      (x) => x.reference_id !== g.reference_id && x.system_role !== 'users' && !inside.has(x.reference_id),
    );
    // Fixed: the list alone (no empty Remove column).
    const list =
      g.groups.length === 0
        ? html`<p>${t('admin.group.nested_none')}</p>`
        : dataTable(
            fixed ? [t('admin.group.group')] : [t('admin.group.group'), { label: t('admin.remove'), quiet: true }],
            g.groups.map(
              (x) =>
                html`<tr>
                  <td><a href="/admin/groups/${x.reference_id}" translate="no">${x.name}</a></td>
                  ${
                    fixed
                      ? ''
                      : html`<td class="actions">
                          ${actionButton(a.csrf, `${base}/groups/remove`, t('admin.remove'), {
                            hidden: { group: x.reference_id },
                            aria: t('admin.group.unnest_aria', { inner: x.name, group: g.name }),
                          })}
                        </td>`
                  }
                </tr>`,
            ),
          );
    const add = fixed
      ? ''
      : choices.length === 0
        ? html`<p class="meta">${tm('admin.group.nest_none', { link: html`<a href="/admin/groups">${t('admin.groups.make_one')}</a>` })}</p>`
        : html`<form method="post" action="${base}/groups/add">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            <div class="field">
              <label for="f-child">${t('admin.group.nest_label')}</label>
              <select id="f-child" name="group" required>
                <option value="">${t('admin.group.nest_choose')}</option>
                ${choices.map((x) => html`<option value="${x.reference_id}" translate="no">${x.name}</option>`)}
              </select>
            </div>
            <button type="submit">${t('admin.group.nest_add')}</button>
          </form>`;
    return html`<section aria-labelledby="h-nested">
        <h2 id="h-nested">${t('admin.group.nested')}</h2>
        <p>${tm('admin.group.nested_intro', { group: data(g.name) })}</p>
        ${list} ${add}
      </section>
      ${insideOf}`;
  };

  const groupPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string } = {}) => {
    const g = await core.groups.show(a.actor, ctx.params.id);
    const managedBy = (await core.configFile.managedBy(a.actor)).of('group', g.name);
    // A directory source's group: its name, members and inner groups are the directory's (the core refuses them here).
    const fromSource = await core.sources.ofGroup(a.actor, g.reference_id);
    const base = `/admin/groups/${g.reference_id}`;
    c.show(
      ctx,
      a,
      'groups',
      t('admin.group.title', { name: g.name }),
      html`${managedBy === null ? '' : html`<p class="notice info" id="group-managed-by">${tm('admin.group.managed_by', { file: data(managedBy) })}</p>`}${
          fromSource === null
            ? ''
            : html`<p class="notice info" id="group-source">
                ${tm('admin.account.from_source', { source: html`<a href="/admin/sources" translate="no">${fromSource}</a>` })} ${t('admin.group.source_owns')}
              </p>`
        }
        <section aria-labelledby="h-members">
          <h2 id="h-members">${t('admin.group.members')}</h2>
          <p id="group-member-counts">${memberCounts(g)}</p>
          ${
            g.members.length === 0
              ? html`<p>${t('admin.group.members_none')}</p>`
              : dataTable(
                  fromSource !== null ? [t('admin.email'), t('admin.name')] : [t('admin.email'), t('admin.name'), { label: t('admin.remove'), quiet: true }],
                  g.members.map(
                    (m) =>
                      html`<tr>
                        <td><a href="/admin/accounts/${m.reference_id}" translate="no">${m.email}</a></td>
                        <td translate="no">${m.name}</td>
                        ${
                          fromSource !== null
                            ? ''
                            : html`<td class="actions">
                                ${actionButton(a.csrf, `${base}/members/remove`, t('admin.remove'), {
                                  hidden: { email: m.email },
                                  aria: t('admin.group.member_remove_aria', { email: m.email }),
                                })}
                              </td>`
                        }
                      </tr>`,
                  ),
                )
          }
          ${
            fromSource !== null
              ? ''
              : html`<form method="post" action="${base}/members/add">
                  <input type="hidden" name="csrf" value="${a.csrf}" />${field('email', t('admin.group.member_email'), {
                    type: 'email',
                    autocomplete: 'off',
                  })}
                  <button type="submit">${t('admin.group.member_add')}</button>
                </form>`
          }
        </section>
        ${await nestedSection(a, g, base, managedBy !== null || fromSource !== null)}
        ${
          managedBy !== null || fromSource !== null
            ? ''
            : g.system_role
              ? ''
              : html`<section aria-labelledby="h-delete" class="danger">
                  <h2 id="h-delete">${t('admin.group.delete_title')}</h2>
                  <form method="post" action="${base}/delete">
                    <input type="hidden" name="csrf" value="${a.csrf}" />${confirmBox(tm('admin.group.delete_confirm', { group: data(g.name) }))}
                    <button type="submit" class="secondary">${t('admin.group.delete')}</button>
                  </form>
                </section>`
        }
        <p class="links"><a href="/admin/groups">${t('admin.group.all')}</a></p>`,
      o,
    );
  };

  c.get('/admin/groups/:id', 'groups', groupPage);
  for (const change of ['add', 'remove'] as const) {
    c.post(
      `/admin/groups/:id/members/${change}`,
      async (ctx, a, body) => {
        const r = await core.groups.changeMember(a.actor, ctx.params.id, str(body, 'email'), change);
        return `/admin/groups/${r.group.reference_id}?done=member_${change === 'add' ? 'added' : 'removed'}`;
      },
      groupPage,
    );
    // A group put inside this one, or taken out: the core refuses a cycle, a chain too deep, anything inside administrators.
    c.post(
      `/admin/groups/:id/groups/${change}`,
      async (ctx, a, body) => {
        const r = await core.groups.changeGroup(a.actor, ctx.params.id, str(body, 'group'), change);
        return `/admin/groups/${r.group.reference_id}?done=group_${change === 'add' ? 'nested' : 'unnested'}`;
      },
      groupPage,
    );
  }
  c.post(
    '/admin/groups/:id/delete',
    async (ctx, a, body) => {
      assertConfirmed(body);
      await core.groups.remove(a.actor, ctx.params.id);
      return '/admin/groups?done=group_deleted';
    },
    groupPage,
  );
}

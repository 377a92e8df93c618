/** The console's invitations and groups: invite by mail, withdraw an invitation; managed groups, their members. */
import type { Context } from 'koa';
import { field, html, type Html, raw } from '../html';
import { type PageKit, str } from '../kit';
import { recentOrConfirm } from '../confirm';
import type { GroupDetail } from '../../../core';
import { actionButton, type Admin, assertConfirmed, confirmBox, type ConsoleKit, dataTable } from './kit';

const date = (iso: string) => iso.replace('T', ' ').slice(0, 16);

/** Form values that may repeat (checkboxes): always a list of strings. */
export const many = (body: unknown, key: string): string[] => {
  const v = (body as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? [v] : [];
};

/** Checkboxes of the managed groups (the only ones that can grant access). */
export async function groupChoices(kit: PageKit, a: Admin, name: string, legend: string) {
  const groups = (await kit.core.groups.managed(a.actor)).filter((g) => g.system_role === null);
  if (groups.length === 0) return html`<p class="meta">No managed groups yet (<a href="/admin/groups">make one</a>).</p>`;
  return html`<fieldset>
    <legend>${legend}</legend>
    ${groups.map((g) => html`<label class="check"><input type="checkbox" name="${name}" value="${g.reference_id}" /> ${g.name}</label>`)}
  </fieldset>`;
}

/** A group's members counted both ways: directly in it, and in all with the groups inside it. */
function memberCounts(g: GroupDetail): Html {
  const people = (n: number) => `${n} ${n === 1 ? 'person' : 'people'}`;
  const direct = `${people(g.member_count)} directly in ${g.name}`;
  if (g.groups.length === 0) return html`${direct}.`;
  return html`${direct}; ${people(g.all_member_count)} in all, with the members of the groups inside it (at any depth, each counted once).`;
}

export function registerConsolePeople(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const invitationsPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const open = await core.invitations.list(a.actor);
    c.show(
      ctx,
      a,
      'invitations',
      'Invitations',
      html`${o.top ?? ''}
        <section aria-labelledby="h-invite">
          <h2 id="h-invite">Invite someone</h2>
          <p>The link in the mail opens signup for this address alone, even while guest signup is closed.</p>
          <form method="post" action="/admin/invitations">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('email', 'Email', { type: 'email', autocomplete: 'off' })} ${await groupChoices(kit, a, 'groups', 'Groups to join')}
            <label class="check"><input type="checkbox" name="administrator" value="yes" /> Make the account an administrator</label>
            <div class="field">
              <label for="f-expires">The link works for</label>
              <select id="f-expires" name="expires">
                <option value="1d">1 day</option>
                <option value="7d" selected>7 days</option>
                <option value="30d">30 days</option>
              </select>
            </div>
            <button type="submit">Send the invitation</button>
          </form>
        </section>
        <section aria-labelledby="h-open">
          <h2 id="h-open">Open invitations</h2>
          ${
            open.length === 0
              ? html`<p>None.</p>`
              : html`${dataTable(
                  ['Email', 'Groups', 'Administrator', 'Expires (UTC)', { label: 'Withdraw', quiet: true }],
                  open.map(
                    (i) =>
                      html`<tr>
                        <td>${i.email}</td>
                        <td>${i.groups.join(', ') || '-'}</td>
                        <td>${i.administrator ? 'yes' : 'no'}</td>
                        <td>${date(i.expires_at)}</td>
                        <td class="actions">
                          ${actionButton(a.csrf, '/admin/invitations/revoke', 'Withdraw', { hidden: { id: i.id }, aria: `Withdraw the invitation of ${i.email}` })}
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
      const expires = { '1d': 86400, '7d': 7 * 86400, '30d': 30 * 86400 }[str(body, 'expires')] ?? 7 * 86400;
      const r = await core.invitations.invite(a.actor, {
        email: str(body, 'email'),
        groups: many(body, 'groups'),
        administrator: str(body, 'administrator') === 'yes',
        expiresInSeconds: expires,
      });
      const mail =
        r.mail.via === 'smtp'
          ? html`<p>The invitation mail is on its way, by the SMTP server ${r.mail.to}.</p>`
          : html`<p>
              <strong>No mail was sent:</strong> no SMTP server is set, so the message was written to the outbox folder ${r.mail.to}. Hand the link over
              yourself.
            </p>`;
      return invitationsPage(ctx, a, {
        top: html`<section aria-labelledby="h-invited" class="notice success">
          <h2 id="h-invited">${r.invitation.email} is invited</h2>
          ${mail}
          <label for="invitation-link">The link (it works once, until ${date(r.invitation.expires_at)} UTC; shown only now)</label>
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
      'Groups',
      html`<section>
          <p>
            Managed groups: made here, from the shell or by an administrator. Only these can open OIDC clients and apps, or appear in the
            <code>groups</code> claim. Members in all counts the people of the groups inside a group too, at any depth, each once.
          </p>
          ${dataTable(
            ['Name', 'Direct members', 'Members in all', 'Created (UTC)'],
            groups.map(
              (g) =>
                html`<tr>
                  <td><a href="/admin/groups/${g.reference_id}">${g.name}</a>${g.system_role ? raw(' <span class="meta">(built in)</span>') : ''}</td>
                  <td>${g.member_count}</td>
                  <td>${g.all_member_count}</td>
                  <td>${date(g.created_at)}</td>
                </tr>`,
            ),
          )}
        </section>
        <section aria-labelledby="h-new-group">
          <h2 id="h-new-group">New group</h2>
          <form method="post" action="/admin/groups">
            <input type="hidden" name="csrf" value="${a.csrf}" />${field('name', 'Name', { maxlength: 100, autocomplete: 'off' })}
            <button type="submit">Create group</button>
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
    const links = (list: GroupDetail['member_of']) => list.map((x, i) => html`${i > 0 ? ', ' : ''}<a href="/admin/groups/${x.reference_id}">${x.name}</a>`);
    const insideOf = html`<section aria-labelledby="h-inside-of">
      <h2 id="h-inside-of">Inside of</h2>
      <p id="group-inside-of">
        ${
          g.member_of.length > 0
            ? html`${links(g.member_of)}: the members of ${g.name} are members there too.`
            : g.system_role === 'users'
              ? 'No group: users holds every account, so it goes inside none.'
              : 'No group.'
        }
      </p>
    </section>`;
    if (g.system_role === 'administrators') {
      return html`<section aria-labelledby="h-nested">
          <h2 id="h-nested">Groups inside</h2>
          <p>No group can go inside administrators: administrators are named people, added one by one.</p>
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
        ? html`<p>No groups inside.</p>`
        : dataTable(
            fixed ? ['Group'] : ['Group', { label: 'Remove', quiet: true }],
            g.groups.map(
              (x) =>
                html`<tr>
                  <td><a href="/admin/groups/${x.reference_id}">${x.name}</a></td>
                  ${
                    fixed
                      ? ''
                      : html`<td class="actions">
                          ${actionButton(a.csrf, `${base}/groups/remove`, 'Remove', { hidden: { group: x.reference_id }, aria: `Take ${x.name} out of ${g.name}` })}
                        </td>`
                  }
                </tr>`,
            ),
          );
    const add = fixed
      ? ''
      : choices.length === 0
        ? html`<p class="meta">No other managed group to put inside this one (<a href="/admin/groups">make one</a>).</p>`
        : html`<form method="post" action="${base}/groups/add">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            <div class="field">
              <label for="f-child">Put a group inside this one</label>
              <select id="f-child" name="group" required>
                <option value="">Choose a group</option>
                ${choices.map((x) => html`<option value="${x.reference_id}">${x.name}</option>`)}
              </select>
            </div>
            <button type="submit">Add group</button>
          </form>`;
    return html`<section aria-labelledby="h-nested">
        <h2 id="h-nested">Groups inside</h2>
        <p>The members of a group inside ${g.name} are members of ${g.name} too, for every app and permission.</p>
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
      `Group ${g.name}`,
      html`${
          managedBy === null
            ? ''
            : html`<p class="notice info" id="group-managed-by">
                Set by ${managedBy}: the groups inside it, and whether it exists, are changed there. Its members are changed here.
              </p>`
        }${
          fromSource === null
            ? ''
            : html`<p class="notice info" id="group-source">
                From the directory source <a href="/admin/sources">${fromSource}</a>: change it there. Its name, its members and the groups inside it are the
                directory&rsquo;s.
              </p>`
        }
        <section aria-labelledby="h-members">
          <h2 id="h-members">Members</h2>
          <p id="group-member-counts">${memberCounts(g)}</p>
          ${
            g.members.length === 0
              ? html`<p>No members yet.</p>`
              : dataTable(
                  fromSource !== null ? ['Email', 'Name'] : ['Email', 'Name', { label: 'Remove', quiet: true }],
                  g.members.map(
                    (m) =>
                      html`<tr>
                        <td><a href="/admin/accounts/${m.reference_id}">${m.email}</a></td>
                        <td>${m.name}</td>
                        ${
                          fromSource !== null
                            ? ''
                            : html`<td class="actions">
                                ${actionButton(a.csrf, `${base}/members/remove`, 'Remove', { hidden: { email: m.email }, aria: `Remove ${m.email} from the group` })}
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
                  <input type="hidden" name="csrf" value="${a.csrf}" />${field('email', 'Add an account by email', { type: 'email', autocomplete: 'off' })}
                  <button type="submit">Add member</button>
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
                  <h2 id="h-delete">Delete the group</h2>
                  <form method="post" action="${base}/delete">
                    <input
                      type="hidden"
                      name="csrf"
                      value="${a.csrf}"
                    />${confirmBox(`Delete ${g.name}: its members leave it, and clients and apps that name it let nobody through it`)}
                    <button type="submit" class="secondary">Delete group</button>
                  </form>
                </section>`
        }
        <p class="links"><a href="/admin/groups">All groups</a></p>`,
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

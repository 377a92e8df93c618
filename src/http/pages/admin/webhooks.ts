/**
 * The console's webhooks and delivery queue: endpoints (add, rotate the secret, remove), each
 * with what is pending or failed, and the messages not yet delivered, mail included. A signing
 * secret is shown once, on the page that answers its creation or rotation.
 */
import type { Context } from 'koa';
import { EVENT_TYPES, type WebhookView } from '../../../core';
import { breakable, field, html, type Html } from '../html';
import { type PageKit, str } from '../kit';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, dataTable, managedNote } from './kit';
import { many } from './people';

export function registerConsoleWebhooks(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const secretOnce = (w: WebhookView, secret: string) =>
    html`<section aria-labelledby="h-secret" class="notice success">
      <h2 id="h-secret">The signing secret of ${w.url}</h2>
      <p>Copy it now into the receiver's settings (Standard Webhooks verify with it): it is shown only this once.</p>
      <p class="secret-once" id="webhook-secret">${secret}</p>
    </section>`;

  const health = (w: WebhookView): Html =>
    w.failed > 0
      ? html`<strong>${w.failed} failed</strong>${w.last_error ? html` <span class="meta">(${w.last_error})</span>` : ''}`
      : w.pending > 0
        ? html`${w.pending} waiting${w.last_error ? html` <span class="meta">(${w.last_error})</span>` : ''}`
        : html`${w.last_delivered_at ? 'delivering' : 'nothing sent yet'}`;

  const webhooksPage = async (ctx: Context, a: Admin, o: { status?: number; error?: string; top?: Html } = {}) => {
    const [hooks, queue, managed] = await Promise.all([
      core.deliveries.listWebhooks(a.actor),
      core.deliveries.list(a.actor),
      core.configFile.managedBy(a.actor),
    ]);
    c.show(
      ctx,
      a,
      'webhooks',
      'Webhooks',
      html`${o.top ?? ''}
        <section>
          ${
            hooks.length === 0
              ? html`<p>No webhooks yet: no other system hears of sign-ups, sign-ins or group changes.</p>`
              : dataTable(
                  ['URL', { label: 'Events', wide: true }, 'State', { label: 'Change', quiet: true }],
                  hooks.map(
                    (w) =>
                      html`<tr>
                        <td>${breakable(w.url)}${w.description ? html`<br /><span class="meta">${w.description}</span>` : ''}</td>
                        <td class="wide-only">${w.events.join(', ') || 'every event'}</td>
                        <td>${health(w)}</td>
                        <td class="actions">
                          ${
                            managed.of('webhook', w.id) !== null
                              ? managedNote(managed.of('webhook', w.id)!)
                              : html`${actionButton(a.csrf, '/admin/webhooks/rotate', 'New secret', { hidden: { webhook: w.id }, confirm: `Replace the secret of ${w.url}` })}
                                ${actionButton(a.csrf, '/admin/webhooks/remove', 'Remove', { hidden: { webhook: w.id }, confirm: `Remove ${w.url}` })}`
                          }
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-webhook">
          <h2 id="h-new-webhook">New webhook</h2>
          <form method="post" action="/admin/webhooks">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('url', 'URL', { autocomplete: 'off', hint: 'Where events are POSTed: https://hooks.example.com/gatehouse' })}
            ${field('description', 'Description', { required: false, autocomplete: 'off', maxlength: 200 })}
            <fieldset>
              <legend>Events (none ticked: every event)</legend>
              ${EVENT_TYPES.map((e) => html`<label class="check"><input type="checkbox" name="events" value="${e}" /> ${e}</label>`)}
            </fieldset>
            <button type="submit">Add webhook</button>
          </form>
        </section>
        <section aria-labelledby="h-queue">
          <h2 id="h-queue">Not yet delivered</h2>
          ${
            queue.length === 0
              ? html`<p>Nothing pending or failed: every mail and webhook went out.</p>`
              : dataTable(
                  ['Message', 'State', { label: 'Tries', wide: true }, { label: 'Next try', wide: true }, 'Last error'],
                  queue.map(
                    (d) =>
                      html`<tr>
                        <td>${d.kind} ${d.topic}<br /><span class="meta">${d.id}</span></td>
                        <td>${d.state}</td>
                        <td class="wide-only">${String(d.attempts)}</td>
                        <td class="wide-only">${d.next_try_at ?? '—'}</td>
                        <td>${d.last_error ?? '—'}</td>
                      </tr>`,
                  ),
                )
          }
        </section>`,
      o,
    );
  };
  c.get('/admin/webhooks', 'webhooks', webhooksPage);
  // Creation and rotation answer a page (not a redirect): the secret is in this answer only.
  kit.post('/admin/webhooks', async (ctx) => {
    await c.run(ctx, webhooksPage, async (a, body) => {
      const r = await core.deliveries.addWebhook(a.actor, { url: str(body, 'url'), events: many(body, 'events'), description: str(body, 'description') });
      return webhooksPage(ctx, a, { top: secretOnce(r.webhook, r.secret) });
    });
  });
  kit.post('/admin/webhooks/rotate', async (ctx) => {
    await c.run(ctx, webhooksPage, async (a, body) => {
      assertConfirmed(body);
      const r = await core.deliveries.rotateWebhookSecret(a.actor, str(body, 'webhook'));
      return webhooksPage(ctx, a, { top: secretOnce(r.webhook, r.secret) });
    });
  });
  c.post(
    '/admin/webhooks/remove',
    async (_ctx, a, body) => {
      assertConfirmed(body);
      await core.deliveries.removeWebhook(a.actor, str(body, 'webhook'));
      return '/admin/webhooks?done=webhook_removed';
    },
    webhooksPage,
  );
}

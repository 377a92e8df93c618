/**
 * The console's webhooks and delivery queue: endpoints (add, rotate the secret, remove), each
 * with what is pending or failed, and the messages not yet delivered, mail included. A signing
 * secret is shown once, on the page that answers its creation or rotation.
 */
import type { Context } from 'koa';
import { EVENT_TYPES, type MessageKey, type WebhookView } from '../../../core';
import { breakable, field, html, type Html, tm } from '../html';
import { look, t } from '../look';
import { type PageKit, str } from '../kit';
import { actionButton, type Admin, assertConfirmed, type ConsoleKit, dataTable, managedNote, when } from './kit';
import { many } from './people';

/** A queued message's kind and state in words; one the page does not know is shown as it is stored. */
const WORDS: Readonly<Record<string, MessageKey>> = Object.assign(Object.create(null) as Record<string, MessageKey>, {
  mail: 'admin.webhooks.kind.mail',
  webhook: 'admin.webhooks.kind.webhook',
  scim: 'admin.webhooks.kind.scim',
  logout: 'admin.webhooks.kind.logout',
  pending: 'admin.webhooks.state.pending',
  delivered: 'admin.webhooks.state.delivered',
  failed: 'admin.webhooks.state.failed',
});
const word = (value: string): string => (WORDS[value] === undefined ? value : t(WORDS[value]));

/** An error a receiver or the network gave: its own words (data), in brackets. */
const lastError = (error: string | null): Html => (error ? html` <span class="meta">(<span translate="no">${error}</span>)</span>` : html``);

export function registerConsoleWebhooks(kit: PageKit, c: ConsoleKit): void {
  const { core } = kit;

  const secretOnce = (w: WebhookView, secret: string) =>
    html`<section aria-labelledby="h-secret" class="notice success">
      <h2 id="h-secret">${tm('admin.webhooks.secret_title', { url: breakable(w.url) })}</h2>
      <p>${t('admin.webhooks.secret_copy')}</p>
      <p class="secret-once" id="webhook-secret">${secret}</p>
    </section>`;

  const health = (w: WebhookView): Html =>
    w.failed > 0
      ? html`<strong>${t('admin.webhooks.failed', { n: look().tr.number(w.failed) })}</strong>${lastError(w.last_error)}`
      : w.pending > 0
        ? html`${t('admin.webhooks.waiting', { n: look().tr.number(w.pending) })}${lastError(w.last_error)}`
        : html`${t(w.last_delivered_at ? 'admin.webhooks.delivering' : 'admin.webhooks.nothing_sent')}`;

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
      t('admin.nav.webhooks'),
      html`${o.top ?? ''}
        <section>
          ${
            hooks.length === 0
              ? html`<p>${t('admin.webhooks.none')}</p>`
              : dataTable(
                  [
                    t('admin.webhooks.url'),
                    { label: t('admin.webhooks.events'), wide: true },
                    t('admin.webhooks.state'),
                    { label: t('admin.change'), quiet: true },
                  ],
                  hooks.map(
                    (w) =>
                      html`<tr>
                        <td>${breakable(w.url)}${w.description ? html`<br /><span class="meta" translate="no">${w.description}</span>` : ''}</td>
                        <td class="wide-only">${w.events.length === 0 ? t('admin.webhooks.every_event') : html`<code>${w.events.join(', ')}</code>`}</td>
                        <td>${health(w)}</td>
                        <td class="actions">
                          ${
                            managed.of('webhook', w.id) !== null
                              ? managedNote(managed.of('webhook', w.id)!)
                              : html`${actionButton(a.csrf, '/admin/webhooks/rotate', t('admin.webhooks.rotate'), {
                                  hidden: { webhook: w.id },
                                  confirm: tm('admin.webhooks.rotate_confirm', { url: breakable(w.url) }),
                                })}
                                ${actionButton(a.csrf, '/admin/webhooks/remove', t('admin.remove'), {
                                  hidden: { webhook: w.id },
                                  confirm: tm('admin.remove_confirm', { name: breakable(w.url) }),
                                })}`
                          }
                        </td>
                      </tr>`,
                  ),
                )
          }
        </section>
        <section aria-labelledby="h-new-webhook">
          <h2 id="h-new-webhook">${t('admin.webhooks.new')}</h2>
          <form method="post" action="/admin/webhooks">
            <input type="hidden" name="csrf" value="${a.csrf}" />
            ${field('url', t('admin.webhooks.url'), { autocomplete: 'off', hint: t('admin.webhooks.url_hint', { example: 'https://hooks.example.com/gatehouse' }) })}
            ${field('description', t('admin.webhooks.description'), { required: false, autocomplete: 'off', maxlength: 200 })}
            <fieldset>
              <legend>${t('admin.webhooks.events_legend')}</legend>
              ${EVENT_TYPES.map((e) => html`<label class="check"><input type="checkbox" name="events" value="${e}" /> <code>${e}</code></label>`)}
            </fieldset>
            <button type="submit">${t('admin.webhooks.add')}</button>
          </form>
        </section>
        <section aria-labelledby="h-queue">
          <h2 id="h-queue">${t('admin.webhooks.queue')}</h2>
          ${
            queue.length === 0
              ? html`<p>${t('admin.webhooks.queue_none')}</p>`
              : dataTable(
                  [
                    t('admin.webhooks.message'),
                    t('admin.webhooks.state'),
                    { label: t('admin.webhooks.tries'), wide: true },
                    { label: t('admin.webhooks.next_try'), wide: true },
                    t('admin.last_error'),
                  ],
                  queue.map(
                    (d) =>
                      html`<tr>
                        <td>
                          ${word(d.kind)} <code>${d.topic}</code><br /><span class="meta"><code>${d.id}</code></span>
                        </td>
                        <td>${word(d.state)}</td>
                        <td class="wide-only">${look().tr.number(d.attempts)}</td>
                        <td class="wide-only">${d.next_try_at === null ? '—' : when(d.next_try_at)}</td>
                        ${d.last_error === null ? html`<td>&mdash;</td>` : html`<td translate="no">${d.last_error}</td>`}
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

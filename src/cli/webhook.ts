/**
 * `gatehouse webhook add | list | show | remove | rotate-secret` and `gatehouse deliveries`:
 * Standard Webhooks endpoints and the delivery queue. These commands queue and read; only a
 * running server sends anything.
 */
import type { Command } from 'commander';
import { EVENT_TYPES, type DeliveryView, type WebhookView } from '../core';
import { withCore, wantsJson } from './context';
import type { Io } from './io';
import { emit, keyValues, table } from './output';

const collect = (value: string, previous?: string[]) => [...(previous ?? []), value];

const showWebhook = (w: WebhookView) =>
  keyValues([
    ['id', w.id],
    ['url', w.url],
    ['description', w.description || null],
    ['events', w.events.join(', ') || 'every event'],
    ['created', w.created_at],
    ['pending', String(w.pending)],
    ['failed', String(w.failed)],
    ['last error', w.last_error],
    ['last delivered', w.last_delivered_at],
  ]);

const secretNote = (secret: string) =>
  `secret:         ${secret}\n\nThe signing secret is shown this once: give it to the receiver (Standard Webhooks verify with it).\n`;

export function registerWebhook(program: Command, io: Io): void {
  const webhook = program
    .command('webhook')
    .description('endpoints told of account events, signed as Standard Webhooks, delivered by the running server with retries');

  webhook
    .command('add')
    .description('register an endpoint; prints its signing secret (whsec_…) once')
    .requiredOption('--url <url>', 'where events are POSTed (http or https)')
    .option('--event <event>', `an event it receives (repeatable; default: every event): ${EVENT_TYPES.join(', ')}`, collect)
    .option('--description <text>', 'what it is for (shown in lists)')
    .action(async (o: { url: string; event?: string[]; description?: string }, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.deliveries.addWebhook(core.shell, { url: o.url, events: o.event, description: o.description });
        emit(io, wantsJson(c), r, () => showWebhook(r.webhook) + secretNote(r.secret));
      }),
    );

  webhook
    .command('list')
    .description('every endpoint, with what is pending or failed')
    .action(async (_o, c: Command) =>
      withCore(c, io, async (core) => {
        const webhooks = await core.deliveries.listWebhooks(core.shell);
        emit(io, wantsJson(c), { webhooks }, () =>
          webhooks.length === 0
            ? 'no webhooks (gatehouse webhook add --url URL)\n'
            : table([
                ['ID', 'URL', 'EVENTS', 'PENDING', 'FAILED', 'LAST ERROR'],
                ...webhooks.map((w) => [w.id, w.url, w.events.join(',') || '*', String(w.pending), String(w.failed), w.last_error ?? '-']),
              ]),
        );
      }),
    );

  webhook
    .command('show <id>')
    .description('one endpoint')
    .action(async (id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const w = await core.deliveries.showWebhook(core.shell, id);
        emit(io, wantsJson(c), w, () => showWebhook(w));
      }),
    );

  webhook
    .command('remove <id>')
    .description('remove an endpoint; messages still queued for it are dropped')
    .action(async (id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const removed = await core.deliveries.removeWebhook(core.shell, id);
        emit(io, wantsJson(c), { removed }, () => `removed ${removed.url} (${removed.id})\n`);
      }),
    );

  webhook
    .command('rotate-secret <id>')
    .description('a new signing secret, printed once; every try from now on is signed with it')
    .action(async (id: string, _o, c: Command) =>
      withCore(c, io, async (core) => {
        const r = await core.deliveries.rotateWebhookSecret(core.shell, id);
        emit(io, wantsJson(c), r, () => showWebhook(r.webhook) + secretNote(r.secret));
      }),
    );

  program
    .command('deliveries')
    .description('mail, webhook, SCIM push and back-channel logout messages not yet delivered: pending (with the next try) and failed (with the last error)')
    .option('--all', 'delivered ones too (kept 7 days)')
    .action(async (o: { all?: boolean }, c: Command) =>
      withCore(c, io, async (core) => {
        const deliveries = await core.deliveries.list(core.shell, o.all ? ['pending', 'failed', 'delivered'] : ['pending', 'failed']);
        emit(io, wantsJson(c), { deliveries }, () => deliveryTable(deliveries));
      }),
    );
}

function deliveryTable(list: DeliveryView[]): string {
  if (list.length === 0) return 'nothing pending or failed\n';
  return table([
    ['ID', 'KIND', 'TOPIC', 'STATE', 'TRIES', 'NEXT TRY', 'LAST ERROR'],
    ...list.map((d) => [
      d.id,
      d.kind,
      d.scim_target === null ? d.topic : `${d.topic} (${d.scim_target})`,
      d.state,
      String(d.attempts),
      d.next_try_at ?? '-',
      d.last_error ?? '-',
    ]),
  ]);
}

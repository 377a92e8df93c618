/**
 * `webhooks:` Standard Webhooks endpoints, each named by its URL, with the events it receives and
 * its signing secret from a reference, never the value. The rules are the shell's (`webhook add`):
 * the URL's syntax, known events, a short description. An endpoint of the file's URL made by hand
 * is taken over; one an earlier apply made and the file no longer names is removed.
 *
 * config_managed records an endpoint by its id, not its URL: a URL's path and query are
 * case-sensitive and may run to 2,000 characters, its query may carry a key, and the id is what
 * `webhook remove ID` is given, so the shell's refusal names what was typed.
 */
import { AppError } from '../../errors';
import { parseWebhookUrl, shownUrl } from '../../runtime/targets';
import { EVENT_TYPES } from '../../deliveries/events';
import { deleteWebhook, insertWebhook, listWebhooks, updateWebhook, type WebhookRow } from '../../store/deliveries';
import { managedNames, markManaged } from '../../store/config-managed';
import type { ParsedConfig } from '../document';
import { dropUnnamed, noResult, noteTakeOver, refChange, type ConfigKind } from '../kind';
import { sameSecret, SECRET_REF_SCHEMA, type SecretRef } from '../secrets';
import { atKey, checkLiteralTarget, envNames, sameSet } from './common';

interface ConfigWebhook {
  url: string;
  events?: string[];
  description?: string;
  secret: SecretRef;
}

/** What `webhook add` makes: whsec_ and the base64 of 24 random bytes. */
const MIN_KEY_BYTES = 24;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A signing secret as Standard Webhooks libraries read it (the sender's among them): whsec_ and
 * base64 (the prefix may be left out), of at least as many bytes as `webhook add` makes. Anything
 * else would fail at the first delivery, so it is refused at the file's line instead. Null: not one.
 */
function signingSecret(value: string): string | null {
  const b64 = value.startsWith('whsec_') ? value.slice('whsec_'.length) : value;
  if (!BASE64.test(b64) || b64.length % 4 !== 0) return null;
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length < MIN_KEY_BYTES || bytes.toString('base64') !== b64) return null;
  return `whsec_${b64}`;
}

/** The words of a webhook's variable: its host, port and path (never its query: it may hold a key). */
const urlWords = (url: string) => {
  const u = new URL(url);
  return `${u.hostname}${u.port ? `_${u.port}` : ''}${u.pathname}`;
};

interface Wanted {
  index: number;
  url: string;
  events: string[];
  description: string;
}

/** The file's webhooks, checked beyond the schema: URLs valid and once each, descriptions printable. */
function wantedWebhooks(parsed: ParsedConfig, allowPrivate: readonly string[]): Map<string, Wanted> {
  const wanted = new Map<string, Wanted>();
  ((parsed.doc.webhooks as ConfigWebhook[] | undefined) ?? []).forEach((entry, index) => {
    const at = ['webhooks', index, 'url'];
    let url: string;
    try {
      url = parseWebhookUrl(entry.url);
    } catch (err) {
      atKey(parsed, at, 'url', err);
    }
    checkLiteralTarget(new URL(url), allowPrivate, parsed.at(at));
    if (wanted.has(url)) throw new AppError('invalid_input', `${parsed.at(at)}: the webhook ${shownUrl(url)} is named twice`);
    const description = (entry.description ?? '').trim();
    if (CONTROL.test(description))
      throw new AppError('invalid_input', `${parsed.at(['webhooks', index, 'description'])}: a description has no control characters`);
    wanted.set(url, { index, url, events: [...new Set(entry.events ?? [])], description });
  });
  return wanted;
}

/**
 * The variable `config export` names for each webhook's secret, by its id: in the order of their
 * URLs, so that the variables' _2, _3… follow it and a round trip names them alike.
 */
function secretVariables(rows: readonly WebhookRow[]): { rows: WebhookRow[]; names: Map<string, string> } {
  const sorted = [...rows].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.id - b.id));
  const names = envNames(
    'GATEHOUSE_WEBHOOK_SECRET_',
    sorted.map((r) => urlWords(r.url)),
  );
  return { rows: sorted, names: new Map(sorted.map((r, i) => [r.reference_id, names[i]])) };
}

const eventsOf = (row: WebhookRow) => JSON.parse(row.events) as string[];
const everyOr = (events: readonly string[]) => (events.length === 0 ? 'every event' : events.join(', '));

export const webhooksKind: ConfigKind = {
  key: 'webhooks',
  schema: {
    description:
      'Webhook endpoints (Standard Webhooks), each named by its URL, with its signing secret as a reference. An endpoint made by hand with the same URL is taken over. `config export` writes each secret as the reference its file applied; one made by hand as {env: GATEHOUSE_WEBHOOK_SECRET_<HOST>_<PORT>_<PATH>}: host, port and path (never the query) in capitals, other characters as _, at most 80 of them, and _2, _3… after a name two URLs share (in the order of their URLs).',
    type: 'array',
    maxItems: 1000,
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['url', 'secret'],
      properties: {
        url: {
          type: 'string',
          minLength: 1,
          maxLength: 2000,
          description: 'Where events are POSTed: http or https, no user or password, no #fragment. An address inside the network needs webhook-allow-private.',
        },
        events: {
          type: 'array',
          minItems: 1,
          maxItems: EVENT_TYPES.length,
          uniqueItems: true,
          items: { enum: [...EVENT_TYPES] },
          description: 'The events it receives (left out: every event).',
        },
        description: { type: 'string', maxLength: 200, description: 'What it is for (shown in lists).' },
        secret: {
          ...SECRET_REF_SCHEMA,
          description: `The signing secret: whsec_ and the base64 of at least ${MIN_KEY_BYTES} random bytes (echo "whsec_$(openssl rand -base64 32)" makes one). ${SECRET_REF_SCHEMA.description}`,
        },
      },
    },
  },

  async reconcile({ s, tx, parsed, file, secret }) {
    const result = noResult();
    const wanted = wantedWebhooks(parsed, s.config.webhookAllowPrivate);
    const managed = await managedNames(tx, 'webhook');
    const stored = await listWebhooks(tx);
    const byUrl = new Map<string, WebhookRow[]>();
    for (const row of stored) byUrl.set(row.url, [...(byUrl.get(row.url) ?? []), row]);
    const kept = new Set<string>();
    const variables = secretVariables(stored).names;
    for (const w of wanted.values()) {
      const found = byUrl.get(w.url) ?? [];
      if (found.length > 1) {
        throw new AppError(
          'invalid_input',
          `${parsed.at(['webhooks', w.index, 'url'])}: ${found.length} webhooks have the URL ${shownUrl(w.url)} (${found.map((r) => r.reference_id).join(', ')}): remove all but one (gatehouse webhook remove ID) before the file manages it`,
        );
      }
      const secretAt = ['webhooks', w.index, 'secret'];
      const before = found[0];
      const recorded = before ? managed.get(before.reference_id) : undefined;
      const entrySecret = (parsed.doc.webhooks as ConfigWebhook[])[w.index].secret;
      const value = signingSecret(
        await secret(
          secretAt,
          before && {
            kind: 'webhook',
            name: shownUrl(w.url),
            current: before.secret,
            stored: recorded?.refs?.secret ?? null,
            placeholder: variables.get(before.reference_id)!,
          },
        ),
      );
      if (value === null) {
        throw new AppError(
          'invalid_input',
          `${parsed.at(secretAt)}: a webhook secret is whsec_ and the base64 of at least ${MIN_KEY_BYTES} random bytes, as webhook add makes them (echo "whsec_$(openssl rand -base64 32)" makes one)`,
        );
      }
      const name = shownUrl(w.url);
      if (!before) {
        const row = await insertWebhook(tx, { url: w.url, description: w.description, events: JSON.stringify(w.events), secret: value });
        kept.add(row.reference_id);
        result.audits.push((s2, actor) =>
          s2.audit.record('webhook_added', actor, { account: null, webhook: row.reference_id, events: w.events.join(',') || '*' }),
        );
        result.changes.push({ sign: '+', kind: 'webhook', name, detail: null });
        await markManaged(tx, 'webhook', row.reference_id, file, true, { secret: entrySecret });
        continue;
      }
      kept.add(before.reference_id);
      const changed: string[] = [];
      const update: Parameters<typeof updateWebhook>[2] = {};
      if (!sameSet(eventsOf(before), w.events)) {
        changed.push(`events: ${everyOr(w.events)} (was ${everyOr(eventsOf(before))})`);
        update.events = JSON.stringify(w.events);
      }
      if (before.description !== w.description) {
        changed.push(`description: ${w.description || 'none'} (was ${before.description || 'none'})`);
        update.description = w.description;
      }
      // Compared here, never shown: the plan says only that it changed.
      if (!sameSecret(before.secret, value)) {
        changed.push('secret changed');
        update.secret = value;
        result.audits.push((s2, actor) => s2.audit.record('webhook_secret_rotated', actor, { account: null, webhook: before.reference_id }));
      }
      await updateWebhook(tx, before.id, update);
      if (recorded?.file === file) {
        const moved = refChange('secret', recorded.refs?.secret, entrySecret);
        if (moved !== null) changed.push(moved);
      }
      noteTakeOver(result, managed, before.reference_id, file, 'webhook', name);
      if (changed.length > 0) result.changes.push({ sign: '~', kind: 'webhook', name, detail: changed.join('; ') });
      await markManaged(tx, 'webhook', before.reference_id, file, false, { secret: entrySecret });
    }
    // Removed: what an earlier apply of this file managed and it no longer names.
    const byId = new Map(stored.map((r) => [r.reference_id, r]));
    const shownOf = (id: string) => {
      const row = byId.get(id);
      return row ? shownUrl(row.url) : id;
    };
    const dropped = await dropUnnamed(tx, result, file, {
      kind: 'webhook',
      objects: stored.map((r) => [r.reference_id, `${shownUrl(r.url)} (${r.reference_id})`] as const),
      managed,
      named: kept,
      shown: shownOf,
      shownOther: (id) => `${shownOf(id)} (${id})`,
      remove: {
        stored: byId,
        drop: async (row) => {
          await deleteWebhook(tx, row.id);
          result.audits.push((s2, actor) => s2.audit.record('webhook_removed', actor, { account: null, webhook: row.reference_id }));
        },
      },
    });
    result.changes.push(...dropped);
    return result;
  },

  async export(s) {
    const { rows, names } = secretVariables(await listWebhooks(s.store.root));
    if (rows.length === 0) return undefined;
    const managed = await managedNames(s.store.root, 'webhook');
    return rows.map((row): ConfigWebhook => {
      const events = eventsOf(row);
      return {
        url: row.url,
        ...(events.length > 0 ? { events } : {}),
        ...(row.description !== '' ? { description: row.description } : {}),
        // The reference a file applied, as it was; else (made by hand) the variable named for it.
        secret: (managed.get(row.reference_id)?.refs?.secret as SecretRef | undefined) ?? { env: names.get(row.reference_id)! },
      };
    });
  },
};

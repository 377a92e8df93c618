/**
 * HTML for the pages: every value escaped, one stylesheet, one same-origin script, nothing from
 * anywhere else. Templates are plain functions returning strings.
 */
import { look, t } from './look';
import type { MessageKey } from '../../core';

export type Html = { readonly html: string };

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escape = (value: unknown): string => String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]);

/**
 * A message whose {places} hold markup (a name in <strong>): the message's own text is escaped
 * like any other (an operator's override with markup shows as text), the places filled after.
 */
export function tm(key: MessageKey, params: Readonly<Record<string, Html>>): Html {
  return raw(escape(t(key)).replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? params[name].html : whole)));
}

/** Marks markup as already safe (built from escaped parts). */
export const raw = (html: string): Html => ({ html });

/** A template tag: interpolated values are escaped unless they are Html (or arrays of Html). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1];
  });
  return { html: out };
}

function render(v: unknown): string {
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return v.map(render).join('');
  if (typeof v === 'object' && 'html' in (v as object)) return (v as Html).html;
  return escape(v);
}

export interface PageOptions {
  title: string;
  /** Whether someone is signed in (the header then offers the account page and signing out). */
  signedIn?: boolean;
  csrf?: string;
  /** Include the page script (only the pages that read a token from the link need it). */
  script?: boolean;
  /** Include the passkey scripts (WebAuthn's browser half and the pages' use of it). */
  passkeys?: boolean;
  /** Submit the page's form marked data-autopost at once (a SAML message on its way to an app). */
  autopost?: boolean;
  /** The administrators' console: a wider page, with its own navigation above the title. */
  console?: Html;
  /** The signed-in account is an administrator: the header offers the console. */
  administrator?: boolean;
  /** A page of many sections (the account page): wider on a wide screen, for its contents and two columns. */
  columns?: boolean;
}

export function page(o: PageOptions, body: Html): string {
  const l = look();
  const nav = o.signedIn
    ? html`<nav aria-label="${t('layout.nav')}">
        ${o.administrator || o.console ? html`<a href="/admin">${t('layout.console')}</a>` : ''}
        <a href="/account">${t('layout.account')}</a>
        <form method="post" action="/signout" class="inline">${csrfField(o.csrf)}<button type="submit" class="link">${t('layout.signout')}</button></form>
      </nav>`
    : html`<nav aria-label="${t('layout.nav')}"><a href="/signin">${t('layout.signin')}</a></nav>`;
  // The accent colour is a class the brand stylesheet rule picks (no inline style: the CSP allows none).
  return `<!doctype html>
<html lang="${l.tr.lang}" dir="${l.tr.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escape(o.title)} · ${escape(l.brandName)}</title>
<link rel="stylesheet" href="/assets/gatehouse.css">
${l.color ? `<link rel="stylesheet" href="/assets/brand-color.css?v=${escape(l.version)}">\n` : ''}${l.css ? `<link rel="stylesheet" href="/assets/brand.css?v=${escape(l.version)}">\n` : ''}<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
${o.script ? '<script src="/assets/gatehouse.js" defer></script>' : ''}${o.autopost ? '<script src="/assets/autopost.js" defer></script>' : ''}${
    o.passkeys ? '<script src="/assets/webauthn.js" defer></script>\n<script src="/assets/passkeys.js" defer></script>' : ''
  }
</head>
<body>
<header><a class="brand" href="/account">${l.logo ? html`<img class="brand-logo" src="/assets/brand-logo?v=${l.version}" alt="" width="28" height="28" />`.html : ''}<span class="brand-name">${escape(l.brandName)}</span></a>${nav.html}</header>
<main id="main"${o.console ? ' class="wide"' : o.columns ? ' class="columns"' : ''}>
${o.console ? o.console.html : ''}<h1>${escape(o.title)}</h1>
${body.html}
</main>
</body>
</html>
`;
}

/**
 * A URL (or entity id) that may wrap after a slash, ?, & or #, and nowhere inside a word unless a
 * part is wider than the space: <wbr> marks the places, the class keeps the rest whole.
 */
export const breakable = (url: string): Html =>
  raw(
    `<span class="url">${url
      .split(/(?<=[/?&#])(?![/])/)
      .map(escape)
      .join('<wbr>')}</span>`,
  );

export const csrfField = (csrf: string | undefined): Html => (csrf ? html`<input type="hidden" name="csrf" value="${csrf}" />` : raw(''));

/** A message above a form: `error` ones are announced to screen readers at once. */
export function notice(kind: 'error' | 'success' | 'info', text: string | undefined): Html {
  if (!text) return raw('');
  return kind === 'error' ? html`<p class="notice error" role="alert">${text}</p>` : html`<p class="notice ${kind}" role="status">${text}</p>`;
}

export interface FieldOptions {
  type?: string;
  value?: string;
  autocomplete?: string;
  required?: boolean;
  hint?: string;
  inputmode?: string;
  autofocus?: boolean;
  pattern?: string;
  maxlength?: number;
  /** The passkey script sends this field's value with a ceremony's options request. */
  passkeyOption?: boolean;
}

/** A labelled input (the label names it for screen readers; the hint is tied by aria-describedby). */
export function field(name: string, label: string, o: FieldOptions = {}): Html {
  const id = `f-${name}`;
  const hint = o.hint ? html`<small id="${id}-hint">${o.hint}</small>` : raw('');
  return html`<div class="field">
    <label for="${id}">${label}</label>
    <input
      id="${id}"
      name="${name}"
      type="${o.type ?? 'text'}"
      ${o.value !== undefined ? html` value="${o.value}"` : ''}${
        o.autocomplete ? html` autocomplete="${o.autocomplete}"` : ''
      }${o.required === false ? '' : raw(' required')}${o.inputmode ? html` inputmode="${o.inputmode}"` : ''}${o.autofocus ? raw(' autofocus') : ''}${
        o.pattern ? html` pattern="${o.pattern}"` : ''
      }${o.maxlength ? html` maxlength="${String(o.maxlength)}"` : ''}${o.hint ? html` aria-describedby="${id}-hint"` : ''}${
        o.passkeyOption ? html` data-passkey-option="${name}"` : ''
      }
    />${hint}
  </div>`;
}

export function form(action: string, csrf: string, submit: string, fields: Html | Html[], o: { id?: string; secondary?: boolean } = {}): Html {
  return html`<form method="post" action="${action}" ${o.id ? html` id="${o.id}"` : ''}>
    ${csrfField(csrf)}${fields}<button type="submit" ${o.secondary ? raw(' class="secondary"') : ''}>${submit}</button>
  </form>`;
}

/** Headers every page carries: no framing, no other origin. */
export const PAGE_CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A refusal or failure outside a form (the error handler's HTML answer). */
export function errorPage(text: string, title = t('error.title')): string {
  return page(
    { title },
    html`${notice('error', text)}
      <section>
        <p class="links"><a href="/account">${t('error.your_account')}</a><a href="/signin">${t('layout.signin')}</a></p>
      </section>`,
  );
}

/**
 * The pages' one stylesheet and one script, embedded so the single executable carries them.
 * The script only moves a token from the link's fragment (#token=…, never sent to servers) into
 * the form on /verify-email and /reset-password; every page works without it.
 */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #f6f7f9; --card: #fff; --line: #d0d7de; --accent: #0b57d0; --accent-fg: #fff;
  --error: #b3261e; --error-bg: #fdecea; --ok: #1e6b34; --ok-bg: #e6f4ea; --muted: #57606a; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --card: #161b22; --line: #30363d; --accent: #5b9cf5; --accent-fg: #0d1117;
  --error: #ffb4ab; --error-bg: #3b1614; --ok: #8fdc9f; --ok-bg: #13291a; --muted: #9198a1; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; align-items: center; justify-content: space-between; gap: 1rem; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: var(--card); }
header nav { display: flex; align-items: center; gap: 1rem; flex-wrap: wrap; justify-content: flex-end; }
header nav a, header nav button { white-space: nowrap; }
@media (max-width: 420px) { header { padding: .75rem; gap: .5rem; } header nav { gap: .75rem; } }
.brand { font-weight: 700; text-decoration: none; color: var(--fg); display: inline-flex; align-items: center; gap: .5rem; min-width: 0; }
.brand-logo { display: block; height: 28px; width: auto; max-width: 8rem; object-fit: contain; }
.brand-name { overflow-wrap: break-word; }
/* Long words (German compounds) wrap at a hyphen rather than run off a phone. */
html[lang="de"] main, html[lang="fr"] main { hyphens: auto; overflow-wrap: break-word; }
button, label, legend, .links a { overflow-wrap: break-word; hyphens: auto; }
main { max-width: 34rem; margin: 1.5rem auto; padding: 0 1rem 3rem; }
h1 { font-size: 1.6rem; margin: 0 0 1rem; }
/* A title that names a long address (an account's email) wraps rather than running off a phone. */
h1, h2 { overflow-wrap: break-word; }
h2 { font-size: 1.15rem; margin: 0 0 .75rem; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem 1.25rem; margin: 0 0 1rem; }
section > :first-child { margin-top: 0; } section > :last-child { margin-bottom: 0; }
.field { margin: 0 0 .9rem; }
label { display: block; font-weight: 600; margin: 0 0 .25rem; }
input { width: 100%; font: inherit; padding: .55rem .65rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
small { display: block; color: var(--muted); margin-top: .25rem; }
button { font: inherit; font-weight: 600; padding: .55rem 1rem; border: 1px solid var(--accent); border-radius: 6px; background: var(--accent); color: var(--accent-fg); cursor: pointer; }
button.secondary { background: transparent; color: var(--accent); }
button.link { background: none; border: none; padding: 0; color: var(--accent); font-weight: 400; text-decoration: underline; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.inline { display: inline; }
.notice { padding: .6rem .8rem; border-radius: 6px; margin: 0 0 1rem; overflow-wrap: anywhere; }
.notice.error { color: var(--error); background: var(--error-bg); }
.notice.success { color: var(--ok); background: var(--ok-bg); }
.notice.info { background: var(--bg); border: 1px solid var(--line); }
.links { margin-top: 1rem; display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0 0 1rem; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
.qr { display: block; width: 100%; max-width: 14rem; margin: 0 auto 1rem; background: #fff; padding: .5rem; border-radius: 6px; }
.qr svg { display: block; width: 100%; height: auto; }
code, .secret { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; }
.codes { columns: 2; padding-left: 2.25rem; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.codes li { white-space: nowrap; }
@media (max-width: 420px) { .codes { columns: 1; } }
.user-code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 1.5rem; letter-spacing: .12em; text-transform: uppercase; }
p.user-code { text-align: center; margin: 1rem 0; }
ul.sessions { list-style: none; padding: 0; margin: 0; }
ul.sessions li { display: flex; justify-content: space-between; align-items: center; gap: 1rem; padding: .6rem 0; border-top: 1px solid var(--line); }
ul.sessions li:first-child { border-top: none; }
ul.sessions button { white-space: nowrap; }
.badge { display: inline-block; font-size: .8rem; padding: 0 .4rem; border: 1px solid var(--line); border-radius: 999px; color: var(--muted); }
p.links form { display: inline-block; margin: 0 .5rem .5rem 0; }
.meta { color: var(--muted); font-size: .9rem; overflow-wrap: anywhere; }
form[data-passkey] { margin-top: .75rem; }
section > form + form, section > .links + form, section > .table-wrap + form { margin-top: 1.25rem; }
.providers { display: flex; flex-direction: column; gap: .5rem; margin-top: .75rem; }
form[data-passkey] .notice { margin-top: .5rem; }
ul.sessions + form, ul.sessions + p { margin-top: 1rem; padding-top: .75rem; border-top: 1px solid var(--line); }
main.wide { max-width: 68rem; }
textarea, select { width: 100%; font: inherit; padding: .55rem .65rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
/* A group of boxes reads as a field: its legend sits above the boxes like a label (a legend on the
   border ran over it once it wrapped to two lines on a phone). */
fieldset { border: 0; padding: 0; margin: 0 0 .9rem; min-width: 0; }
legend { float: left; width: 100%; font-weight: 600; padding: 0; margin: 0 0 .35rem; }
legend + * { clear: left; }
fieldset .check { margin-bottom: .35rem; }
@media (max-width: 600px) { .wide-only { display: none; } }
nav.console { display: flex; flex-wrap: wrap; gap: .25rem .5rem; margin: 0 0 1rem; padding: 0 0 .5rem; border-bottom: 1px solid var(--line); }
nav.console a { padding: .25rem .5rem; border-radius: 6px; text-decoration: none; }
nav.console a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
td.actions { min-width: 8rem; }
/* One form under another, each box above its own button (side by side, a box floated between two buttons). */
td.actions form { display: block; margin: 0 0 .5rem; max-width: 18rem; }
td.actions form:last-child { margin-bottom: 0; }
td.actions .check { font-size: .85rem; align-items: flex-start; margin-bottom: .35rem; }
/* A row's longer form (a client's ID token claims) folded under its summary until opened. */
td.actions details { margin: 0 0 .5rem; }
td.actions summary { cursor: pointer; font-size: .9rem; margin-bottom: .35rem; }
/* A row's button keeps its words on one line (a squeezed column broke "Sync now" in two). */
td.actions button { white-space: nowrap; }
/* A state that went wrong (a directory source's last sync), in the error colour beside its reason. */
.failed { color: var(--error); }
/* A date and time in a table cell: one line. */
.when { white-space: nowrap; }
/* A shell command shown one option a line: a little smaller, so a line fits a phone. */
p.command { font-size: .9rem; }
td code { overflow-wrap: anywhere; }
/* Long values wrap instead of pushing the page sideways. */
td, .notice h2 { overflow-wrap: anywhere; }
/* URLs (breakable() marks a place after each /, ?, & and #) wrap there, not mid-word. */
.url, td .url { overflow-wrap: break-word; word-break: normal; }
/* Phones: each row is a block of its cells (secondary columns dropped), so nothing hides off screen. */
@media (max-width: 600px) {
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap td { display: block; width: 100%; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  .table-wrap tr { padding: .5rem 0; border-bottom: 1px solid var(--line); }
  .table-wrap td { border: none; padding: .1rem 0; }
  .table-wrap td:first-child { font-weight: 600; }
  .table-wrap td[data-label]:not(:first-child)::before { content: attr(data-label) ": "; color: var(--muted); }
  .table-wrap td.wide-only { display: none; }
  td.actions form { max-width: none; }
  .table-wrap td .when { white-space: normal; }
}
.search { display: flex; gap: .5rem; align-items: end; flex-wrap: wrap; }
.search .field { flex: 1 1 14rem; margin: 0; }
.check { display: flex; gap: .5rem; align-items: center; font-weight: 400; margin: 0 0 .75rem; }
.check input { width: auto; }
.danger button[type="submit"] { border-color: var(--error); background: transparent; color: var(--error); }
.secret-once { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: anywhere; padding: .5rem; background: var(--bg); border: 1px dashed var(--line); border-radius: 6px; }
[hidden] { display: none !important; }
/* The account page: its contents, then its sections; on a wide screen the contents stay in view
   beside two columns. */
nav.toc { margin: 0 0 1rem; }
nav.toc ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem .5rem; }
nav.toc a { display: inline-block; padding: .2rem .5rem; border: 1px solid var(--line); border-radius: 6px; background: var(--card); text-decoration: none; }
nav.toc a:hover { text-decoration: underline; }
section[id] { scroll-margin-top: 1rem; }
section:target { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
@media (min-width: 64rem) {
  main.columns { max-width: 76rem; }
  .account-layout { display: grid; grid-template-columns: 12rem minmax(0, 1fr); gap: 1.5rem; align-items: start; }
  nav.toc { position: sticky; top: 1rem; margin: 0; }
  nav.toc ul { flex-direction: column; gap: .15rem; }
  nav.toc a { display: block; border: 0; background: none; padding: .3rem .5rem; }
  .account-sections { columns: 2; column-gap: 1rem; }
  .account-sections > section { break-inside: avoid; }
}
`;

export const SCRIPT = `
(function () {
  var m = /(?:^|[#&])token=([^&]+)/.exec(location.hash);
  if (!m) return;
  var token = decodeURIComponent(m[1]);
  // Out of the address bar and history: the token works once and should not linger.
  history.replaceState(null, '', location.pathname + location.search);
  var input = document.querySelector('input[name="token"]');
  if (!input) return;
  input.value = token;
  var box = input.closest('.field');
  if (box) box.hidden = true;
  document.querySelectorAll('[data-without-token]').forEach(function (el) { el.hidden = true; });
  var next = document.querySelector('[data-with-token] input:not([type=hidden]):not([name=token])') || document.querySelector('[data-with-token] button');
  if (next) next.focus();
})();
`;

/** The tab icon: a gate in the pages' blue, drawn here (no third-party asset). */
export const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b57d0"/><path d="M8 26V13a8 8 0 0 1 16 0v13" fill="none" stroke="#fff" stroke-width="3"/><path d="M12 26v-9h8v9" fill="none" stroke="#fff" stroke-width="2"/></svg>`;

/** Submits the form a SAML step carries (to an app's ACS URL, or back to Gatehouse); its button does the same without script. */
export const AUTOPOST = `document.querySelector('form[data-autopost]')?.submit();
`;

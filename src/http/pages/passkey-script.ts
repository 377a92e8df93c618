/**
 * The pages' passkey script (served as /assets/passkeys.js, beside @simplewebauthn/browser as
 * /assets/webauthn.js). A form marked data-passkey="signin|register|signup" is shown only where
 * the browser has WebAuthn; on submit the script asks /passkeys/options for the ceremony's
 * options (with the form's CSRF token), lets the browser make or use the passkey, puts its answer
 * in the form's `response` field and sends the form as an ordinary post. The sign-in page also
 * offers passkeys in the email field's autofill (conditional mediation).
 */
export const PASSKEY_SCRIPT = `
(function () {
  var W = window.SimpleWebAuthnBrowser;
  if (!W || !W.browserSupportsWebAuthn()) return;
  var csrf = function () { var i = document.querySelector('input[name="csrf"]'); return i ? i.value : ''; };
  // The words come from the form's error line (data-*: the page's catalogue, in the reader's language).
  var said = function (form, name) {
    var p = form.querySelector('[data-passkey-error]');
    return (p && p.getAttribute('data-' + name)) || '';
  };
  var say = function (form, text) {
    var p = form.querySelector('[data-passkey-error]');
    if (!p) return;
    p.textContent = text;
    p.hidden = false;
  };
  var words = function (form, err) {
    if (err && err.name === 'NotAllowedError') return said(form, 'cancelled');
    if (err && err.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return said(form, 'registered');
    // An IP address or a plain-http host: the browser's own words ("127.0.0.1 is an invalid domain") say little.
    if (err && (err.name === 'SecurityError' || err.code === 'ERROR_INVALID_DOMAIN' || err.code === 'ERROR_INVALID_RP_ID'))
      return said(form, 'wrong-host').replace('{host}', location.host);
    return (err && err.message) || said(form, 'failed');
  };
  var options = function (form, fields) {
    fields.csrf = csrf();
    return fetch('/passkeys/options', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString()
    }).then(function (r) {
      return r.json().then(function (body) {
        if (r.ok) return body.options;
        var refusal = Array.isArray(body) && body[0] && body[0].Attributes ? body[0].Attributes : {};
        // Too long since the sign-in to add a passkey: confirm it is you, then back to this section.
        if (refusal.code === 'reauthentication_required') {
          location.assign('/signin/confirm?return=' + encodeURIComponent('/account#passkeys'));
          return new Promise(function () {});
        }
        var text = refusal.message || said(form, 'refused');
        throw new Error(text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.'));
      });
    });
  };
  var finish = function (form, answer) {
    form.querySelector('input[name="response"]').value = JSON.stringify(answer);
    form.submit();
  };
  document.querySelectorAll('form[data-passkey]').forEach(function (form) {
    form.hidden = false;
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      var purpose = form.getAttribute('data-passkey');
      var fields = { purpose: purpose };
      document.querySelectorAll('[data-passkey-option]').forEach(function (input) {
        if (input.value) fields[input.getAttribute('data-passkey-option')] = input.value;
      });
      var button = form.querySelector('button[type="submit"]');
      if (button) button.disabled = true;
      options(form, fields)
        .then(function (o) {
          return purpose === 'signin' ? W.startAuthentication({ optionsJSON: o }) : W.startRegistration({ optionsJSON: o });
        })
        .then(function (answer) { finish(form, answer); })
        .catch(function (err) {
          if (button) button.disabled = false;
          say(form, words(form, err));
        });
    });
  });
  var signin = document.querySelector('form[data-passkey="signin"][data-passkey-autofill]');
  if (signin && document.querySelector('input[autocomplete~="webauthn"]') && W.browserSupportsWebAuthnAutofill) {
    W.browserSupportsWebAuthnAutofill().then(function (yes) {
      if (!yes) return;
      return options(signin, { purpose: 'signin' })
        .then(function (o) { return W.startAuthentication({ optionsJSON: o, useBrowserAutofill: true }); })
        .then(function (answer) { finish(signin, answer); });
    }).catch(function () { /* the button's own request replaced this one, or autofill was dismissed */ });
  }
})();
`;

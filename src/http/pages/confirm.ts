/**
 * "Confirm it is you": /signin/confirm?return=<local path>[&need=second-factor]. A change that
 * adds a way in (a passkey, an API key, an app password, TOTP, a new email; a SCIM token or an
 * invitation in the console) needs a recent sign-in, and an app may ask for a second factor (step
 * up, from an OpenID Connect or SAML sign-in in progress). This page asks the signed-in person for
 * what their account has (the password, a code, a passkey) and runs the reauthenticate action on
 * the session they are in, then goes back to `return`. It decides nothing: the action checks the
 * proof, the limits and lockouts are a sign-in's.
 */
import type { Context } from 'koa';
import { type Actor, assertPlainJson, type Caller, type Core } from '../../core';
import { field, form, html, type Html, notice, page } from './html';
import { type KnownRefusals, type PageKit, refusal, see, send, str } from './kit';
import { look, t } from './look';
import { csrfToken, pageCaller } from './session';
import { INTERACTION_PATH } from '../oidc';
import { ceremonyForm } from './passkey-forms';
import { confirmAddress, confirmReturn, needsConfirming } from './confirm-return';
import { providerButtons } from './provider-forms';

/**
 * Before a console change that adds a way in (a SCIM token, an invitation): true when the
 * administrator signed in recently; otherwise they are sent to confirm it is them (false).
 */
export async function recentOrConfirm(ctx: Context, core: Core, admin: { actor: Actor }, back: string): Promise<boolean> {
  try {
    await core.actions.assertRecentSignin(admin.actor);
    return true;
  } catch (err) {
    if (!needsConfirming(err)) throw err;
    see(ctx, confirmAddress(back));
    return false;
  }
}

interface State {
  back: string;
  secondFactor: boolean;
  status?: number;
  error?: string;
}

export function registerConfirm(kit: PageKit): void {
  const { core, router, names, run, html_, post } = kit;

  const stateOf = (source: unknown): Omit<State, 'status' | 'error'> => ({
    back: confirmReturn(str(source, 'return')),
    secondFactor: str(source, 'need') === 'second-factor',
  });

  const confirmPage = async (ctx: Context, caller: Caller, o: State) => {
    const csrf = csrfToken(ctx, names);
    const me = await core.records.me(caller);
    const totp = (me.view.attributes as { totp_enabled: boolean }).totp_enabled;
    const { passkeys, hasPassword } = await core.passkeys.mine(caller);
    const carried = html`<input
        type="hidden"
        name="return"
        value="${o.back}"
      />${o.secondFactor ? html`<input type="hidden" name="need" value="second-factor" />` : ''}`;
    const parts: Html[] = [];
    if (hasPassword && !o.secondFactor) {
      parts.push(
        form('/signin/confirm', csrf, t('pages.confirm.submit'), [
          carried,
          field('password', t('signin.password'), { type: 'password', autocomplete: 'current-password', autofocus: !o.error || !totp }),
        ]),
      );
    }
    if (totp) {
      parts.push(
        form('/signin/confirm', csrf, t('pages.confirm.submit_code'), [
          carried,
          field('otp', t('pages.confirm.otp'), {
            autocomplete: 'one-time-code',
            autofocus: o.secondFactor || !hasPassword,
            hint: t('pages.confirm.otp_hint'),
          }),
        ]),
      );
    }
    if (passkeys.length > 0) {
      parts.push(
        ceremonyForm('signin', '/signin/confirm/passkey', csrf, t('pages.confirm.passkey'), [carried]),
        html`<noscript><p class="meta">${t('pages.passkeys.need_script')}</p></noscript>`,
      );
    }
    let intro: Html;
    if (o.secondFactor && !totp && passkeys.length === 0) {
      // Nothing to ask: the app wants a factor this account does not have yet.
      intro = html`<p>${t('pages.confirm.none')}</p>
        <p>${t(hasPassword ? 'pages.confirm.none.add_either' : 'pages.confirm.none.add_passkey')}</p>
        <p class="links">
          <a href="/account#passkeys">${t('pages.confirm.add_passkey')}</a>${
            hasPassword ? html`<a href="/account#two-factor">${t('pages.confirm.turn_on_totp')}</a>` : ''
          }
        </p>`;
    } else if (o.secondFactor) {
      intro = html`<p>${t(totp && passkeys.length ? 'pages.confirm.second.either' : totp ? 'pages.confirm.second.code' : 'pages.confirm.second.passkey')}</p>`;
    } else if (parts.length === 0) {
      // No password, passkey or code: only another provider signs this account in; a fresh sign-in with it is the proof.
      const linked = await core.providers.identities(caller);
      const buttons = (await core.providers.buttons()).filter((b) => linked.some((i) => i.provider === b.name));
      intro = html`<p>${t('pages.confirm.provider')}</p>
        ${providerButtons(csrf, buttons, INTERACTION_PATH.test(o.back) ? { returnTo: o.back } : { rd: `${core.config.publicUrl}${o.back}` })}`;
    } else {
      const { tr } = look();
      // Whole minutes, as the setting is given (at least one).
      const recent = tr.duration(Math.max(1, Math.round(core.config.recentSignin / 60)) * 60);
      const ways = [
        hasPassword && t('pages.confirm.way.password'),
        totp && t('pages.confirm.way.code'),
        passkeys.length > 0 && t('pages.confirm.way.passkey'),
      ].filter((w): w is string => typeof w === 'string');
      const said = new Intl.ListFormat(tr.lang, { type: 'disjunction' }).format(ways);
      intro = html`<p>${t('pages.confirm.recent', { time: recent, ways: said })}</p>`;
    }
    send(
      ctx,
      o.status ?? 200,
      page(
        { title: t('pages.confirm.title'), signedIn: true, csrf, passkeys: passkeys.length > 0 },
        html`${notice('error', o.error)}
          <section>
            ${intro}${parts}
            <p class="links">
              <a href="${o.back.startsWith('/account') || o.back.startsWith('/admin') ? o.back : '/account'}">${t('pages.confirm.cancel')}</a>
            </p>
          </section>`,
      ),
    );
  };

  router.get('/signin/confirm', html_, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const state = stateOf(ctx.query);
    const caller = await pageCaller(ctx, core, names);
    // Signed out meanwhile: a sign-in in progress asks for a sign-in itself; anything else, the sign-in page.
    if (!caller) return see(ctx, INTERACTION_PATH.test(state.back) ? state.back : '/signin');
    await confirmPage(ctx, caller, state);
  });

  /** A proof sent: reauthenticate this session with it, then back; a refusal shows on the page. */
  const confirm = async (ctx: Context, attributes: () => Record<string, unknown>) => {
    const state = stateOf(ctx.request.body);
    const caller = await pageCaller(ctx, core, names);
    if (!caller) return see(ctx, '/signin');
    try {
      await run(caller, 'reauthenticate', attributes());
    } catch (err) {
      if (err === NOTHING) return confirmPage(ctx, caller, { ...state, status: 400, error: t('pages.confirm.nothing') });
      return confirmPage(ctx, caller, { ...state, ...refusal(err, undefined, REFUSED) });
    }
    see(ctx, state.back);
  };

  post('/signin/confirm', async (ctx) => {
    const body = ctx.request.body;
    const otp = str(body, 'otp').trim();
    // A second factor asked for: the password alone is not one, so it is not taken here.
    const password = stringOrNothing(str(body, 'need') === 'second-factor' ? '' : str(body, 'password'));
    await confirm(ctx, () => {
      if (password === undefined && !otp) throw NOTHING;
      return { ...(password !== undefined ? { password } : {}), ...(otp ? { otp } : {}) };
    });
  });

  post('/signin/confirm/passkey', async (ctx) => {
    await confirm(ctx, () => {
      let response: unknown = null;
      try {
        response = JSON.parse(str(ctx.request.body, 'response'));
      } catch {
        // A form the script did not fill in: the action refuses it plainly.
      }
      assertPlainJson(response, 'the passkey response');
      return { response: response ?? {} };
    });
  });
}

/** A wrong password or code, in the page's words (the core's name the API's fields). */
const REFUSED: KnownRefusals = { invalid_credentials: 'pages.confirm.wrong_password' };

/** An empty form: said on the page in its own words. */
const NOTHING = new Error('nothing entered');
const stringOrNothing = (v: string): string | undefined => (v === '' ? undefined : v);

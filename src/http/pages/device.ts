/**
 * The device flow's pages (RFC 8628), rendered for `oidc-provider`, which runs the flow itself:
 * /device asks for the code a TV or a command line shows (or arrives with it filled in from
 * `verification_uri_complete`), then names the application and asks to confirm; the sign-in in
 * between is the OpenID Connect interaction (oidc-interaction.ts: the signin action with every
 * rule, and the client's group gate); the last page says it worked. A wrong code counts against
 * the address (core.oidc.codeEntryFailed), a confirmed one is audited (device_authorized).
 */
import type { Context } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { Core } from '../../core';
import { html, notice, page, tm } from './html';
import { csrfToken, guestCaller, pageCaller, type PageCookies } from './session';
import { NOT_ALLOWED } from './oidc-words';
import { named } from './kit';
import { look, t } from './look';

/** The browser's own state of the flow: the xsrf secret the provider keeps in its session. */
const secretOf = (ctx: KoaContextWithOIDC): string => String((ctx.oidc.session?.state as { secret?: string } | undefined)?.secret ?? '');

/**
 * What went wrong with the last code, in the person's words (the provider's errors by name). A
 * refusal at the interaction reaches this page as "aborted"; the device code keeps why.
 */
function problem(err: (Error & { error?: string; userCode?: string }) | undefined, why: string | undefined): string | undefined {
  if (!err) return undefined;
  if (why === NOT_ALLOWED) return t('pages.device.not_allowed');
  switch (err.name) {
    case 'NoCodeError':
      return t('pages.device.no_code');
    case 'NotFoundError':
      return t('pages.device.wrong_code');
    case 'ExpiredError':
      return t('pages.device.expired');
    case 'AlreadyUsedError':
      return t('pages.device.used');
    case 'AbortedError':
      return t('pages.device.aborted');
  }
  if (err.error === 'access_denied') return t('pages.device.not_allowed');
  return t('pages.device.failed');
}

/** Why the sign-in on the interaction was refused, kept on its device code (a resumed flow only). */
async function refusedBecause(ctx: KoaContextWithOIDC, err: Error): Promise<string | undefined> {
  const interaction = ctx.oidc.entities.Interaction as { deviceCode?: string } | undefined;
  if (err.name !== 'AbortedError' || !interaction?.deviceCode) return undefined;
  const code = await ctx.oidc.provider.DeviceCode.find(interaction.deviceCode, { ignoreExpiration: true });
  return code?.errorDescription;
}

export interface DevicePages {
  input(ctx: KoaContextWithOIDC, form: string, out?: unknown, err?: Error): Promise<void>;
  confirm(ctx: KoaContextWithOIDC, form: string, client: { clientId: string; clientName?: string }, deviceInfo: unknown, userCode: string): Promise<void>;
  success(ctx: KoaContextWithOIDC): Promise<void>;
}

export function devicePages(core: Core, names: PageCookies, action: string): DevicePages {
  /** A page with the nav of whoever this browser is signed in as. */
  const render = async (ctx: KoaContextWithOIDC, title: string, body: ReturnType<typeof html>) => {
    const koa = ctx as unknown as Context;
    const signedIn = (await pageCaller(koa, core, names)) !== null;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = page({ title, signedIn, csrf: signedIn ? csrfToken(koa, names) : undefined }, body);
  };

  return {
    async input(ctx, _form, _out, err) {
      const koa = ctx as unknown as Context;
      if (err?.name === 'NotFoundError') await core.oidc.codeEntryFailed(guestCaller(koa));
      const code = (err as { userCode?: string } | undefined)?.userCode;
      await render(
        ctx,
        t('pages.device.title'),
        html`${err ? notice('error', problem(err, await refusedBecause(ctx, err))) : ''}
          <section>
            <p>${t('pages.device.intro', { brand: look().brandName })}</p>
            <form method="post" action="${action}" id="device-code">
              <input type="hidden" name="xsrf" value="${secretOf(ctx)}" />
              <div class="field">
                <label for="f-user_code">${t('pages.device.field')}</label>
                <input
                  id="f-user_code"
                  name="user_code"
                  type="text"
                  class="user-code"
                  value="${code ?? ''}"
                  autocomplete="off"
                  autocapitalize="characters"
                  spellcheck="false"
                  maxlength="20"
                  placeholder="XXXX-XXXX"
                  required
                  autofocus
                  aria-describedby="f-user_code-hint"
                />
                <small id="f-user_code-hint">${t('pages.device.hint')}</small>
              </div>
              <button type="submit">${t('pages.device.continue')}</button>
            </form>
          </section>`,
      );
    },

    async confirm(ctx, _form, client, _deviceInfo, userCode) {
      const name = client.clientName || client.clientId;
      const secret = secretOf(ctx);
      await render(
        ctx,
        t('pages.device.confirm.title', { app: name }),
        html`<section>
          <p>${tm('pages.device.confirm.asks', { app: html`<strong>${named(name)}</strong>`, brand: named(look().brandName) })}</p>
          <p>${t('pages.device.confirm.check')}</p>
          <p class="user-code" id="user-code" translate="no">${userCode}</p>
          <p class="meta">${t('pages.device.confirm.warning')}</p>
          <div class="links">
            <form method="post" action="${action}" class="inline">
              <input type="hidden" name="xsrf" value="${secret}" /><input type="hidden" name="user_code" value="${userCode}" /><input
                type="hidden"
                name="confirm"
                value="yes"
              /><button type="submit" autofocus>${t('pages.device.continue')}</button>
            </form>
            <form method="post" action="${action}" class="inline">
              <input type="hidden" name="xsrf" value="${secret}" /><input type="hidden" name="user_code" value="${userCode}" /><input
                type="hidden"
                name="abort"
                value="yes"
              /><button type="submit" class="secondary">${t('pages.confirm.cancel')}</button>
            </form>
          </div>
        </section>`,
      );
    },

    async success(ctx) {
      const koa = ctx as unknown as Context;
      const code = (ctx.oidc as unknown as { deviceCode?: { accountId?: string; clientId: string } }).deviceCode;
      const client = ctx.oidc.client!;
      if (code?.accountId) {
        await core.oidc.deviceAuthorized((await pageCaller(koa, core, names)) ?? guestCaller(koa), code.accountId, code.clientId);
      }
      await render(
        ctx,
        t('pages.device.done.title'),
        html`<p class="notice success" role="status">${tm('pages.device.done', { app: named(client.clientName || client.clientId) })}</p>
          <section>
            <p>${t('pages.device.done.text')}</p>
            <p class="links"><a href="/account">${t('error.your_account')}</a></p>
          </section>`,
      );
    },
  };
}

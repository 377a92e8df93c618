/**
 * The pages: sign in, sign up (while open to guests), the pages mailed links open (confirm an
 * email address, lift the signin delay, reset a password), the account page, and the OpenID
 * Connect provider's login and consent. One file per page group; each form post runs the same
 * action as the API, through the core, so every rule (limits, lockouts, TOTP, verified email,
 * disabled accounts) is the same; errors show as the action's own message above the form.
 */
import Router from '@koa/router';
import type { Core } from '../../core';
import type { OidcProvider } from '../oidc';
import { AUTOPOST, FAVICON, SCRIPT, STYLESHEET } from './assets';
import { pageKit, see } from './kit';
import { registerSignin } from './signin';
import { registerSignup } from './signup';
import { registerMailedLinks } from './mailed-links';
import { registerAccount } from './account';
import { registerCredentialPages, registerSshKeyPages } from './credentials';
import { registerInteractions } from './oidc-interaction';
import { registerPasskeys } from './passkeys';
import { registerConsole } from './admin/routes';
import { registerProviders } from './providers';
import { registerSaml } from './saml';
import { registerConfirm } from './confirm';
import { registerBrandAssets } from './brand';

export function createPageRouter(core: Core, oidc?: OidcProvider): Router {
  const router = new Router();
  const kit = pageKit(core, router);
  router.get('/assets/gatehouse.css', (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = STYLESHEET;
  });
  router.get('/assets/gatehouse.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = SCRIPT;
  });
  router.get('/assets/autopost.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = AUTOPOST;
  });
  for (const path of ['/assets/favicon.svg', '/favicon.ico']) {
    router.get(path, (ctx) => {
      ctx.type = 'image/svg+xml';
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = FAVICON;
    });
  }
  registerBrandAssets(router, core);
  router.get('/', kit.html_, (ctx) => see(ctx, '/account'));
  const signinPage = registerSignin(kit);
  const signupPage = registerSignup(kit, signinPage);
  registerMailedLinks(kit);
  const account = registerAccount(kit);
  registerPasskeys(kit, signinPage, signupPage, account);
  registerProviders(kit, account);
  registerCredentialPages(kit, account);
  registerSshKeyPages(kit, account);
  // "Confirm it is you": a recent sign-in before a new way in, and an app's second factor.
  registerConfirm(kit);
  registerConsole(kit);
  if (oidc) registerInteractions(kit, oidc, signinPage);
  registerSaml(kit, signinPage);
  return router;
}

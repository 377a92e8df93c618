/**
 * "One more step": the code from the account's authenticator app, asked once the first factor
 * proved right (a password on the sign-in page, or another provider's sign-in). One page for both
 * ways: it asks for the code and nothing else (the password is not typed again), and shows an
 * error only when a code was refused. One box takes the 6-digit code or a recovery code.
 */
import type { Context } from 'koa';
import { field, form, html, notice, page } from './html';
import { send } from './kit';
import { t } from './look';

export interface CodeStep {
  /** Where the code is posted. */
  action: string;
  /** What the form carries besides the code: the step's handle, where to go afterwards. */
  carried: Record<string, string | undefined>;
  csrf: string;
  status?: number;
  error?: string;
}

export function codeStepPage(ctx: Context, o: CodeStep): void {
  // The step's handle is on the page: never kept by a cache.
  ctx.set('Cache-Control', 'no-store');
  const carried = Object.entries(o.carried)
    .filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '')
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`);
  send(
    ctx,
    o.status ?? 200,
    page(
      { title: t('pages.code_step.title'), csrf: o.csrf },
      html`${notice('error', o.error)}
        <section>
          <p>${t('pages.code_step.intro')}</p>
          ${form(o.action, o.csrf, t('signin.submit'), [
            ...carried,
            // No numeric keypad: the same box takes a recovery code, which has letters.
            field('otp', t('pages.code_step.field'), {
              autocomplete: 'one-time-code',
              autofocus: true,
              hint: t('pages.code_step.hint'),
            }),
          ])}
          <p class="links"><a href="/signin">${t('pages.code_step.again')}</a></p>
        </section>`,
    ),
  );
}

// One rule for answering an app (issue 73): OpenID Connect, SAML and forward authentication bring
// the sign-in's level and what the app needs to accounts/app-answer.ts, and only it compares them
// (assurance.ts's fallsShort). The HTTP front end asks the core; it decided step-up itself in two
// places before (http/oidc.ts's login check, the OIDC interaction page), and SAML and forward
// authentication compared levels on their own.
import t from 'tap';
import { callsOf } from '../helpers/calls';
import { stillAnswers } from '../../src/accounts/app-answer';

const MFA = 'https://refeds.org/profile/mfa';
const SFA = 'https://refeds.org/profile/sfa';

t.test('in the code: the one comparison is made by the rule alone, and every protocol asks the rule', async (t) => {
  t.same(callsOf('fallsShort'), ['accounts/app-answer.ts:fallsShortOf', 'accounts/app-answer.ts:fallsShortOf'], 'levels are compared in the rule only');
  t.same(
    [...callsOf('answerApp'), ...callsOf('stillAnswers')].sort(),
    ['apps/operations.ts:forward', 'oidc/login.ts:answerLogin', 'oidc/login.ts:loginMeets', 'oidc/support.ts:accountFor', 'saml/sso.ts:continueSignin'],
    'forward authentication, OpenID Connect (login check, interaction, every use of a token) and SAML ask it',
  );
  t.same(
    callsOf('asksForMfa'),
    ['oidc/login.ts:answerLogin', 'oidc/login.ts:needsOf', 'oidc/login.ts:unmetAnswer'],
    'what an OpenID Connect request asks is read in the core',
  );
  const frontEnds = [...callsOf('answerApp'), ...callsOf('stillAnswers'), ...callsOf('fallsShort'), ...callsOf('asksForMfa')].filter((c) =>
    /^(http|cli|ldap)\//.test(c),
  );
  t.same(frontEnds, [], 'no front end decides step-up');
});

t.test('at a use (a token, a proxied request): an app takes a sign-in only at the level it needs now', async (t) => {
  const table: Array<[string | undefined, { twoFactor: boolean; asked?: boolean }, boolean]> = [
    [SFA, { twoFactor: false }, true],
    [SFA, { twoFactor: true }, false],
    [SFA, { twoFactor: false, asked: true }, false],
    [MFA, { twoFactor: true, asked: true }, true],
    [undefined, { twoFactor: false }, true],
    [undefined, { twoFactor: true }, false],
  ];
  for (const [acr, needs, expected] of table) t.equal(await stillAnswers(acr, needs), expected, `${acr ?? 'no level'} for ${JSON.stringify(needs)}`);
  let read = false;
  t.ok(
    await stillAnswers(MFA, async () => {
      read = true;
      return { twoFactor: true };
    }),
  );
  t.notOk(read, "two factors meet anything: the app's needs are not read");
});

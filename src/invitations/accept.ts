/** Accepting an invitation with a password: the account-rules check (name, password), then the one creation path. */
import type { Actor } from '../actor';
import type { Services } from '../services';
import { AppError } from '../errors';
import { validateName, validatePassword } from '../accounts/validate';
import type { CreatedAccount } from '../accounts/create';
import { acceptInvitation, openInvitation } from './invitations';
import { parseUsername } from '../accounts/usernames';

export async function acceptWithPassword(
  s: Services,
  actor: Actor,
  token: string,
  input: { name: string; password: string; passwordConfirm: string; username?: string },
): Promise<CreatedAccount> {
  const invitation = await openInvitation(s, { token });
  await s.limiter.signupAttempt(actor);
  const name = validateName(input.name);
  if (!input.password) throw new AppError('invalid_input', 'password is required');
  validatePassword(input.password, input.passwordConfirm, invitation.email_key, s.config.passwordMinLength);
  const username = input.username === undefined || input.username === '' ? {} : { username: parseUsername(input.username) };
  return acceptInvitation(s, actor, { token }, { name, password: input.password, ...username });
}

/**
 * The upstream-provider domain's operations: providers (administrators and the shell), the
 * sign-in and link flows (the pages), and a caller's linked identities (the account page).
 */
import { AppError } from '../errors';
import { iso } from '../clock';
import type { Actor, Caller } from '../actor';
import type { Services } from '../services';
import { actorOf } from '../access/caller';
import { assertKeepsAWayIn } from '../accounts/ways-in';
import { ownAccount } from '../accounts/acting';
import { deleteIdentity, identitiesOf } from '../store/upstream';
import { beginUpstream, type Carry, type Finished, finishSecondFactor, finishUpstream } from './flow';
import { addProvider, listProviderViews, type NewProvider, providerButtons, type ProviderView, removeProvider, showProvider } from './providers';

export type { NewProvider, ProviderView } from './providers';
export type { Carry, Finished } from './flow';

export interface IdentityView {
  id: string;
  provider: string;
  display_name: string;
  email: string | null;
  created_at: string;
  last_used_at: string | null;
}

export interface ProviderOperations {
  add(actor: Actor, input: NewProvider): Promise<ProviderView>;
  list(actor: Actor): Promise<ProviderView[]>;
  show(actor: Actor, name: string): Promise<ProviderView>;
  /** `force`: even when some account signs in only through it. */
  remove(actor: Actor, name: string, force?: boolean): Promise<ProviderView>;
  /** The sign-in page's buttons: names and display names only. */
  buttons(): Promise<Array<{ name: string; display_name: string }>>;
  /** Begins a sign-in (a guest) or a link (signed in): the upstream address. `binding`: the browser's flow cookie. */
  begin(caller: Caller, provider: string, o: { purpose: 'signin' | 'link'; binding: string; carry: Carry; inviteToken?: string }): Promise<string>;
  /** The callback. */
  finish(caller: Caller, provider: string, callbackUrl: URL, binding: string | null): Promise<Finished>;
  /** The second factor after an upstream sign-in, for an account with TOTP on. */
  secondFactor(
    caller: Caller,
    pending: string,
    binding: string | null,
    otp: string,
  ): Promise<{ session: { token: string; refreshToken: string }; carry: Carry }>;
  /** The caller's linked identities. */
  identities(caller: Caller): Promise<IdentityView[]>;
  /** Unlinks one of the caller's identities, never the last way in. */
  unlink(caller: Caller, id: string): Promise<IdentityView>;
}

export function providerOperations(s: Services): ProviderOperations {
  const view = (i: Awaited<ReturnType<typeof identitiesOf>>[number]): IdentityView => ({
    id: i.reference_id,
    provider: i.provider,
    display_name: i.display_name,
    email: i.email,
    created_at: iso(i.created_at),
    last_used_at: iso(i.last_used_at),
  });
  return {
    add: (actor, input) => addProvider(s, actor, input),
    list: (actor) => listProviderViews(s, actor),
    show: (actor, name) => showProvider(s, actor, name),
    remove: (actor, name, force) => removeProvider(s, actor, name, force),
    buttons: () => providerButtons(s),
    begin: async (caller, provider, o) => beginUpstream(s, await actorOf(s, caller), provider, o),
    finish: async (caller, provider, url, binding) => finishUpstream(s, await actorOf(s, { ...caller, token: null }), provider, url, binding),
    secondFactor: async (caller, pending, binding, otp) => finishSecondFactor(s, await actorOf(s, { ...caller, token: null }), pending, binding, { otp }),
    async identities(caller) {
      const { account } = await ownAccount(s, caller, { change: false });
      return (await identitiesOf(s.store.root, account.id)).map(view);
    },
    async unlink(caller, id) {
      const { actor, account } = await ownAccount(s, caller, { change: true });
      const found = (await identitiesOf(s.store.root, account.id)).find((i) => i.reference_id === id);
      if (!found) throw new AppError('not_found', 'no such linked sign-in');
      const removed = await s.store.transaction(async (tx) => {
        await assertKeepsAWayIn(tx, account, 'identity');
        return deleteIdentity(tx, account.id, id);
      });
      if (!removed) throw new AppError('not_found', 'no such linked sign-in');
      await s.audit.record('identity_unlinked', actor, { account: account.reference_id, provider: found.provider });
      return view(found);
    },
  };
}

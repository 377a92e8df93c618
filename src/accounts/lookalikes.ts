/**
 * Addresses that look alike: `a@exаmple.com` (a Cyrillic а) beside `a@example.com`. identityKey
 * (validate.ts) already makes one account of the spellings a mail server treats as one mailbox in
 * practice (case, fullwidth letters, NFD); these are other mailboxes, which a person still cannot
 * tell apart in a list, an audit line or a mail. Every account keeps its address's confusable
 * skeleton (Unicode Technical Standard #39, section 4), and a new address whose skeleton is another
 * account's is refused on every way in, in the transaction that writes it (under lockAccounts),
 * unless the operator lets it in on purpose.
 */
import { domainToUnicode } from 'node:url';
import { AppError } from '../errors';
import type { Tx } from '../store/connection';
import { accountWithSkeleton } from '../store/accounts';

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

type Prototypes = (text: string) => string;
let loading: Promise<Prototypes> | undefined;

/**
 * unhomoglyph replaces each character by its prototype from Unicode's confusables.txt (its data
 * is that file's mapping, version 13.0; about 100 KB), loaded at the first address that needs it.
 */
const prototypes = (): Promise<Prototypes> => (loading ??= import('unhomoglyph').then((m) => m.default));

/**
 * The domain as a reader sees it: each IDNA A-label (`xn--exmple-4nf`, the form a mail client
 * may show and a person may type) decoded to the letters it stands for (`exаmple`, a Cyrillic а),
 * so an address cannot escape its skeleton by being written in ASCII. A label that is not valid
 * punycode stays as it is.
 */
function readableDomain(emailKey: string): string {
  const at = emailKey.lastIndexOf('@');
  if (at < 0) return emailKey;
  const labels = emailKey
    .slice(at + 1)
    .split('.')
    .map((label) => (/^xn--/i.test(label) ? domainToUnicode(label) || label : label));
  return `${emailKey.slice(0, at + 1)}${labels.join('.')}`;
}

/**
 * Beyond UTS #39: its table sends the shapes of a thin upright stroke to two prototypes, `l` (for
 * `I`, `1`, `|`, Cyrillic `Ӏ`) and `i` (for `ı`, `ι`, Cyrillic `ӏ` and `і`), yet in the fonts
 * addresses are read in (a mail client, a URL bar, a console table) Cyrillic `ӏ` is an `l`, and
 * `examp1e`, `exampie` and `exampӏe` pass for one another. The skeleton therefore writes both as
 * one (`l`): a few addresses that differ only there (`bill@…` and `biil@…`) count as look-alikes,
 * which is the side to err on.
 */
const foldStrokes = (skeleton: string) => skeleton.replace(/i/g, 'l');

/**
 * The skeleton of an address's identity key, as UTS #39 defines it (with its domain's A-labels
 * decoded first): NFD, without the default-ignorable characters, each character replaced by its
 * prototype, NFD again; then `i` and `l` folded into one (foldStrokes). Two keys that look alike
 * have one skeleton. It is for comparing, never for showing: `m` becomes `rn`.
 * (migrations/20261214000000_email_skeletons_idna.ts computes the same for the accounts it found;
 * change both together, in a new migration.)
 */
export async function emailSkeleton(emailKey: string): Promise<string> {
  const toPrototypes = await prototypes();
  return foldStrokes(toPrototypes(readableDomain(emailKey).normalize('NFD').replace(IGNORABLE, '')).normalize('NFD'));
}

export interface LookalikeRule {
  /** The account the address is for, when it changes one's: its own skeleton is no clash. */
  self?: number;
  /**
   * Whether the caller may learn the other account's address: administrators, the shell, a
   * provisioning service. Anyone else (a guest signing up, a person changing their own address)
   * gets the answer a taken address gets, which names nobody.
   */
  reveal: boolean;
  /** The operator let this one in (the `allow` rule, which the shell's import and user create set): the skeleton is kept, nothing is refused. */
  allow?: boolean;
  /** The flag that would let it in, named in the refusal where the caller has it. */
  flag?: string;
}

export const emailTaken = () => new AppError('email_taken', 'an account with this email already exists');

/**
 * The skeleton to store with `emailKey`, once no other account's address looks like it. Call it
 * inside the transaction that writes the address, after lockAccounts: the check and the write
 * are one.
 */
export async function checkedSkeleton(tx: Tx, emailKey: string, rule: LookalikeRule): Promise<string> {
  const skeleton = await emailSkeleton(emailKey);
  if (rule.allow === true) return skeleton;
  const other = await accountWithSkeleton(tx, skeleton, rule.self ?? null);
  if (!other) return skeleton;
  if (!rule.reveal) throw emailTaken();
  const letIn = rule.flag ? ` (${rule.flag} lets it in)` : '';
  throw new AppError('email_taken', `the address looks like an existing account's address ${other.email}${letIn}`);
}

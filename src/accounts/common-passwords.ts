/**
 * Passwords every attacker tries first. Three checks, all case-insensitive:
 * - the 30,000 most frequent passwords of a published breach corpus (breached-passwords.ts), plus
 *   a short hand list of long variants;
 * - such a word, or "gatehouse", with digits and symbols around it ("password2024!", "gatehouse123");
 * - keyboard and alphabet walks and repeats ("123456789012", "qwertyuiopas", "abcabcabc").
 */
import BREACHED from './breached-passwords';

/** Long variants the breach list ranks lower than they deserve. */
const HAND_LIST = `
password password1 password12 password123 password1234 passw0rd p@ssw0rd p@ssword passwort
12345678 123456789 1234567890 12345678910 123123123 11111111 111111111 1111111111 00000000
000000000 0000000000 88888888 99999999 12341234 123qweasd 1q2w3e4r 1q2w3e4r5t 1q2w3e4r5t6y
qwertyui qwertyuiop qwerty123 qwerty1234 qwerty12 qwertyu1 1qaz2wsx 1qazxsw2 zaq12wsx zaq1zaq1
asdfghjk asdfghjkl asdf1234 zxcvbnm1 zxcvbnm123 abcd1234 abc12345 abcdefgh abcdefg1 a1b2c3d4
iloveyou iloveyou1 iloveyou2 princess princess1 sunshine sunshine1 football football1 baseball
basketball superman batman123 starwars trustno1 whatever letmein1 letmein123 welcome1 welcome123
changeme changeme1 admin123 admin1234 administrator adminadmin rootroot master123 monkey123
dragon123 shadow123 michael1 jennifer jordan23 computer internet chocolate butterfly
qazwsxedc qazwsx123 passpass secret123 mypassword newpassword test1234 testtest test12345
default1 guest123 login123 hello123 helloworld freedom1 whatever1 charlie1 liverpool
arsenal1 chelsea1 manchester mustang1 harley12 pokemon1 samsung1 google123 apple123 azerty123
aaaaaaaa aaaaaaaaa 11223344 12344321 87654321 98765432 147258369 123654789 987654321 741852963
qweasdzxc zxcvbnm12 q1w2e3r4 q1w2e3r4t5 1234qwer qwer1234 asdfasdf 123456789a a123456789
123456abc abc123456 loveyou1 lovelove babygirl1 michelle jessica1 nicole12 ashley12 superstar
summer12 spring12 winter12 autumn12 iloveyou! password! welcome! qwerty!1 gatehouse gatehouse1
`
  .split(/\s+/)
  .filter((p) => p.length > 0)
  .map((p) => p.toLowerCase());

/** Built on first use (a signup or password change), not at start-up. */
let known: Set<string> | null = null;
function knownPasswords(): Set<string> {
  known ??= new Set([...BREACHED.split('\n'), ...HAND_LIST, 'gatehouse']);
  return known;
}

/** Rows of a keyboard, the alphabet and the digits, each also reversed; walks may wrap. */
const WALKS = [
  '1234567890',
  'qwertyuiopasdfghjklzxcvbnm',
  'qazwsxedcrfvtgbyhnujmikolp',
  'azertyuiopqsdfghjklmwxcvbn',
  'qwertzuiopasdfghjklyxcvbnm',
  'abcdefghijklmnopqrstuvwxyz',
].flatMap((w) => {
  const twice = w + w;
  return [twice, [...twice].reverse().join('')];
});

const isWalk = (p: string) => WALKS.some((w) => w.includes(p));

/**
 * Keyboard, alphabet or digit walks (at most three, of 3+ keys each: "qwertyuiopas",
 * "zxcvbnmasdfg", "123456789012"), or one short unit repeated ("aaaaaaaa", "abcabcabc").
 */
function isPattern(p: string): boolean {
  for (let unit = 1; unit <= 4 && unit * 2 <= p.length; unit++) {
    if (
      p
        .slice(0, unit)
        .repeat(Math.ceil(p.length / unit))
        .slice(0, p.length) === p
    )
      return true;
  }
  let i = 0;
  for (let walks = 0; walks < 3 && i < p.length; walks++) {
    let j = i + 1;
    while (j < p.length && isWalk(p.slice(i, j + 1))) j++;
    if (j - i < 3 && !(j === p.length && walks === 0)) return false;
    i = j;
  }
  return i === p.length;
}

export function isCommonPassword(password: string): boolean {
  const p = password.toLowerCase();
  const list = knownPasswords();
  if (list.has(p) || isPattern(p)) return true;
  // A listed word dressed up with digits and symbols around it: "password2024!", "!!dragon7".
  const core = p.replace(/^[\d\W_]+|[\d\W_]+$/gu, '');
  if (core.length >= 3 && core !== p && (list.has(core) || isPattern(core))) return true;
  // Only digits and symbols: walks and repeats of the digits ("123456789012", "1111!!!!").
  const digits = p.replace(/[\W_]+/gu, '');
  return core.length === 0 && digits.length > 0 && isPattern(digits);
}

// A mailed sign-in code's tries (store/mail-codes.ts): each code typed first takes a try by one
// conditional write, so of twenty guesses sent at once exactly five are looked at; spending the
// code is another conditional write, so of four sent at once one spends it, and a spent, ended or
// triless code takes no try. On SQLite and PostgreSQL (the same file runs on both).
import t from 'tap';
import { loadConfig } from '../../src/config';
import { insertMailCode, MAIL_CODE_TRIES, sha256, spendMailCode, takeMailCodeTry } from '../../src/store/mail-codes';
import { inspectionDb, openTestStore } from '../helpers/db';
import { storeFlags, tempDir } from '../helpers/server';

t.test('twenty tries at once: five taken; four spends at once: one', async (t) => {
  const config = loadConfig(await storeFlags(t, tempDir(t)), {});
  const store = await openTestStore(t, config);
  const db = inspectionDb(t, config);
  const row = (handle: string, accountId: number | null) => ({
    handle_hash: sha256(handle),
    binding_hash: sha256('browser'),
    code_hash: sha256('code'),
    email_key: 'a@example.com',
    account_id: accountId,
    expires_at: Date.now() + 600_000,
  });
  await insertMailCode(store.root, row('guessed', null));
  const guessed = Number(
    (
      await db('mail_code')
        .where({ handle_hash: sha256('guessed') })
        .first('id')
    ).id,
  );
  const taken = await Promise.all(Array.from({ length: 20 }, () => takeMailCodeTry(store.root, guessed)));
  t.equal(taken.filter(Boolean).length, MAIL_CODE_TRIES, 'five tries taken, the rest refused');
  t.equal(Number((await db('mail_code').where({ id: guessed }).first('tries')).tries), MAIL_CODE_TRIES);
  t.notOk(await takeMailCodeTry(store.root, guessed), 'none after the fifth');

  // Spending needs an account the code was mailed to: one made by hand.
  const now = Date.now();
  await db('user_account').insert({
    reference_id: 'r-1',
    email: 'a@example.com',
    email_key: 'a@example.com',
    name: 'A',
    password: 'x',
    permission: 0,
    created_at: now,
    updated_at: now,
  });
  const owner = Number((await db('user_account').first('id')).id);
  await insertMailCode(store.root, row('spent', owner));
  const spent = Number(
    (
      await db('mail_code')
        .where({ handle_hash: sha256('spent') })
        .first('id')
    ).id,
  );
  const spends = await Promise.all([1, 2, 3, 4].map(() => spendMailCode(store.root, spent, sha256('browser'), sha256('code'))));
  t.equal(spends.filter(Boolean).length, 1, 'one of four spends');
  t.notOk(await takeMailCodeTry(store.root, spent), 'a spent code takes no try');
  t.notOk(await spendMailCode(store.root, spent, sha256('browser'), sha256('code')), 'nor is spent again');

  await insertMailCode(store.root, { ...row('ended', owner), expires_at: Date.now() - 1 });
  const ended = Number(
    (
      await db('mail_code')
        .where({ handle_hash: sha256('ended') })
        .first('id')
    ).id,
  );
  t.notOk(await takeMailCodeTry(store.root, ended), 'an ended code takes no try');
  t.notOk(await spendMailCode(store.root, ended, sha256('browser'), sha256('code')), 'nor is spent');
});

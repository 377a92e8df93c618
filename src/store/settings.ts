/** Server-wide settings kept in the store (shared by every instance on one database). */
import { randomBytes } from 'node:crypto';
import { op } from './handle';

/** The JWT signing secret: made once (first start wins under races), then read. */
export const jwtSecret = op(async (h): Promise<Buffer> => {
  const existing = await h.k('gatehouse_setting').where({ name: 'jwt_secret' }).first('value');
  if (existing) return Buffer.from(String(existing.value), 'base64');
  await h
    .k('gatehouse_setting')
    .insert({ name: 'jwt_secret', value: randomBytes(32).toString('base64') })
    .onConflict('name')
    .ignore();
  const row = await h.k('gatehouse_setting').where({ name: 'jwt_secret' }).first('value');
  return Buffer.from(String(row.value), 'base64');
});

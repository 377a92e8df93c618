/** Server-wide settings kept in the store (shared by every instance on one database). */
import { randomBytes } from 'node:crypto';
import type { Db } from './connection';

/** The JWT signing secret: made once (first start wins under races), then read. */
export async function jwtSecret(db: Db): Promise<Buffer> {
  const existing = await db('gatehouse_setting').where({ name: 'jwt_secret' }).first('value');
  if (existing) return Buffer.from(String(existing.value), 'base64');
  await db('gatehouse_setting')
    .insert({ name: 'jwt_secret', value: randomBytes(32).toString('base64') })
    .onConflict('name')
    .ignore();
  const row = await db('gatehouse_setting').where({ name: 'jwt_secret' }).first('value');
  return Buffer.from(String(row.value), 'base64');
}

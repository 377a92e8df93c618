/**
 * A simple bind (RFC 4511 4.2) through the core's sign-in home. Every failure answers alike; a
 * password in clear text is refused off loopback unless the configuration allows it.
 */
import { isAppError } from '../errors';
import { OP, result, RESULT, type Request } from './protocol';
import type { Session } from './session';

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

export async function bind(c: Session, r: Extract<Request, { kind: 'bind' }>): Promise<void> {
  if (c.identity !== null) c.setBound(false);
  c.identity = null;
  if (r.version !== 3) return c.send(result(r.id, OP.bindResponse, RESULT.protocolError, 'LDAP version 3 only'));
  if (r.dn === '' && r.password === '') return c.send(result(r.id, OP.bindResponse, RESULT.success));
  if (r.password === '')
    return c.send(result(r.id, OP.bindResponse, RESULT.unwillingToPerform, 'an unauthenticated bind (a DN without a password) is refused'));
  if (!c.encrypted && !c.o.allowInsecureBind && !LOOPBACK.test(c.address)) {
    return c.send(result(r.id, OP.bindResponse, RESULT.confidentialityRequired, 'a password in clear text: use LDAPS or StartTLS'));
  }
  const at = c.tree.locate(r.dn);
  const username = at && at.at === 'person' ? at.name : '';
  try {
    c.identity = await c.core.directory.bind({ token: null, client: c.address, userAgent: null }, username, r.password, c.o.readers);
  } catch (err) {
    if (isAppError(err) && err.code === 'unavailable') throw err;
    // Every failure alike: unknown DN, wrong password, a locked account, a disabled one.
    return c.send(result(r.id, OP.bindResponse, RESULT.invalidCredentials, 'invalid credentials'));
  }
  c.setBound(true);
  c.send(result(r.id, OP.bindResponse, RESULT.success));
}

// Stopping under load: a SIGTERM while clients keep their connections busy (keep-alive, a request
// always in flight on each) ends in the time the requests take. An outside attack saw the server
// keep answering on the open connections for the whole grace period, then cut the requests in
// flight (errors on both sides). Now every answer after the signal closes its connection, and
// connections with no request in them are closed at once: a client that sent its next request on
// one just then sees a reset before anything was read, which clients and proxies retry
// (as with any server that stops); no request the server began is cut.
import http from 'node:http';
import t from 'tap';
import { EXE, exeFolder, runExe, serveExe } from '../helpers/exe';
import { PASSWORD, storeFlags } from '../helpers/server';

t.test('SIGTERM under keep-alive load: every request answered, the server gone long before its grace', async (t) => {
  const { dir, env } = exeFolder(t);
  const store = await storeFlags(t, dir);
  const dbArgs = store.db ? ['--db', String(store.db)] : [];
  const boot = await runExe(EXE, ['--data-dir', dir, ...dbArgs, 'bootstrap-admin', '--email', 'admin@example.com', '--password-stdin'], {
    env,
    cwd: dir,
    stdin: PASSWORD + '\n',
  });
  t.equal(boot.code, 0, boot.stderr);
  // A grace of ten minutes: if draining waited for it, the test would time out instead of passing.
  const server = await serveExe(t, EXE, ['--data-dir', dir, ...dbArgs], { env: { ...env, GATEHOUSE_SHUTDOWN_GRACE: '600000' }, cwd: dir });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  // Sign-ins: each holds its connection for a password hash, so some are in flight at the signal.
  const url = new URL('/action/user_account/signin', server.url);
  const body = JSON.stringify({ attributes: { email: 'admin@example.com', password: PASSWORD } });
  const outcomes = { ok: 0, refused: 0, reset: 0, closing: 0, failed: [] as string[] };
  const once = () =>
    new Promise<void>((resolve) => {
      const req = http.request(url, { agent, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.headers.connection === 'close') outcomes.closing++;
          if (res.statusCode === 200) outcomes.ok++;
          else outcomes.failed.push(`status ${res.statusCode}`);
          resolve();
        });
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        // After the listener closes, a new connection is refused: the client goes elsewhere.
        if (e.code === 'ECONNREFUSED') outcomes.refused++;
        else if (e.code === 'ECONNRESET' && stopping && req.reusedSocket) outcomes.reset++;
        else outcomes.failed.push(e.code ?? e.message);
        resolve();
      });
      req.end(body);
    });
  let stopping = false;
  const client = async () => {
    while (!stopping || outcomes.refused === 0) {
      await once();
      if (outcomes.failed.length > 0 || outcomes.refused > 20) return;
    }
  };
  const clients = Array.from({ length: 8 }, client);
  while (outcomes.ok < 8 && outcomes.failed.length === 0) await new Promise((r) => setTimeout(r, 50));
  const answeredBefore = outcomes.ok;
  stopping = true;
  const code = await server.stop();
  await Promise.all(clients);
  agent.destroy();
  t.equal(code, 0, 'a graceful exit');
  t.ok(answeredBefore > 0, `requests were answered under load (${answeredBefore} before the signal)`);
  t.same(
    outcomes.failed,
    [],
    `no request cut or failed (${outcomes.ok} answered, ${outcomes.closing} of them closing their connection; ${outcomes.reset} sent on an idle connection as it closed; then ${outcomes.refused} refused at the closed port)`,
  );
  t.ok(outcomes.closing > 0, 'answers after the signal close their connection');
  t.notMatch(server.output(), /"level":"error"/, 'nothing logged as an error');
});

t.test('an answer under way at the signal (its body still coming) closes its connection too', async (t) => {
  // The retest: a request whose headers came before SIGTERM and its body after was answered with
  // keep-alive, and the server waited for that idle connection to time out before it stopped.
  const { dir, env } = exeFolder(t);
  const store = await storeFlags(t, dir);
  const dbArgs = store.db ? ['--db', String(store.db)] : [];
  const server = await serveExe(t, EXE, ['--data-dir', dir, ...dbArgs], { env: { ...env, GATEHOUSE_SHUTDOWN_GRACE: '600000' }, cwd: dir });
  const agent = new http.Agent({ keepAlive: true });
  const body = JSON.stringify({ attributes: { email: 'nobody@example.com', password: 'not the password' } });
  const answer = new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(new URL('/action/user_account/signin', server.url), {
      agent,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    });
    req.on('response', (res) => (res.resume(), resolve(res)));
    req.on('error', reject);
    req.flushHeaders();
    // The body once the signal has been taken (the server says so in its log).
    const sent = setInterval(() => {
      if (/shutting_down/.test(server.output())) {
        clearInterval(sent);
        req.end(body);
      }
    }, 20);
  });
  await new Promise((r) => setTimeout(r, 300));
  const stopped = server.stop();
  const res = await answer;
  t.equal(res.headers.connection, 'close', `answered (${res.statusCode}) with Connection: close`);
  t.equal(await stopped, 0, 'and the server stopped without waiting for the connection to time out');
  agent.destroy();
});

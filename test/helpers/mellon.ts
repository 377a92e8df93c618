// docs/saml.md's Apache mod_auth_mellon recipe, run as written in an empty folder as an ordinary
// user: its shell lines and its whole httpd.conf (with more of the docs' blocks after it, when a
// test adds one). What changes, and nothing else:
//   - the ports: 6336 (Gatehouse) and 8080 (Apache) become free ones, everywhere in the blocks
//     (the file names mellon_create_metadata writes carry the port too);
//   - `gatehouse serve` is the test's server (in-process, the recipe's public URL with that port),
//     and each other `gatehouse` line runs through the CLI in-process against its store, with a
//     file name the recipe wrote in its folder (sp.xml) given as that file's full path;
//   - the other lines run with /bin/sh in the folder, as `nobody` when the test runs as root.
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import type { Clock } from '../../src/clock';
import { freePort } from './browser';
import { cli } from './cli';
import { foregroundLine, ordinaryUser, samlDocBlock, shellLine } from './saml';
import { startTestServer, tempDir, type TestServer } from './server';

export interface MellonSetup {
  s: TestServer;
  /** The app's address: http://wiki.app.localhost:<port>. */
  app: string;
  /** The end of Apache's error log, for a failure's message. */
  errorLog: () => string;
  /** The recipe's shell lines and httpd.conf, ports changed. */
  lines: string[];
  conf: string;
  serveLine: string | undefined;
}

/** Runs the recipe; `more` names docs/saml.md blocks appended to httpd.conf as written. */
export async function mellonRecipe(t: Test, o: { more?: string[]; clock?: Clock } = {}): Promise<MellonSetup> {
  const [gatePort, web] = [await freePort(), await freePort()];
  const ports = (text: string) => text.replaceAll('6336', String(gatePort)).replaceAll('8080', String(web));
  const lines = ports(samlDocBlock('mellon-shell'))
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, ''));
  const conf = [samlDocBlock('mellon'), ...(o.more ?? []).map((name) => samlDocBlock(name))].map(ports).join('\n');
  const serveLine = lines.find((l) => l.startsWith('gatehouse serve '));
  const s = await startTestServer(t, { port: gatePort, publicUrl: `http://id.app.localhost:${gatePort}` }, undefined, o.clock ? { clock: o.clock } : {});

  const dir = tempDir(t, 'gatehouse-mellon-');
  fs.chmodSync(dir, 0o755);
  const user = ordinaryUser(dir);
  fs.writeFileSync(path.join(dir, 'httpd.conf'), conf);
  const errorLog = () => {
    const file = path.join(dir, 'error.log');
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').slice(-3000) : '';
  };

  for (const line of lines) {
    if (line === serveLine || line.trim() === '') continue;
    const piped = /^printf '([^']*)' \| gatehouse (.*)$/.exec(line);
    const plain = /^gatehouse (.*)$/.exec(line);
    if (piped || plain) {
      const args = (piped?.[2] ?? plain![1]!).split(/\s+/).map((a) => (/^[\w-]+\.xml$/.test(a) ? path.join(dir, a) : a));
      const r = await cli(s.dataDir, args, { stdin: piped?.[1] });
      if (r.code !== 0) throw new Error(`${line}: ${r.err}`);
    } else if (line.startsWith('/usr/sbin/apache2 ')) {
      await foregroundLine(t, line, dir, user, web, errorLog);
    } else {
      await shellLine(line, dir, user);
    }
  }
  return { s, app: `http://wiki.app.localhost:${web}`, errorLog, lines, conf, serveLine };
}

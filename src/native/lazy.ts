/**
 * Libraries that only some requests need (the OIDC provider, the body parser, mail, QR codes)
 * are bundled by scripts/build.mjs into files of their own, not into the main bundle: V8 keeps a
 * script's whole source in memory while any of its functions may still be compiled, so code
 * that an idle server never runs would otherwise cost memory and start-up time in every process.
 * `import('oidc-provider')` in the bundle lands here and compiles that file on first use.
 *
 * Inside the executable the files are SEA assets; beside a plain bundle they are in lazy/.
 * A chunk needs nothing but Node's built-in modules (the build checks this).
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { sea } from './load';

export function loadLazy(name: string): unknown {
  const executable = sea();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (!executable) return require(path.join(__dirname, 'lazy', name));
  const source = executable.getAsset(name, 'utf8');
  const wrapper = vm.compileFunction(source, ['exports', 'require', 'module', '__filename', '__dirname'], { filename: `gatehouse/lazy/${name}` });
  const module = { exports: {} as unknown };
  wrapper.call(module.exports, module.exports, require, module, `gatehouse/lazy/${name}`, 'gatehouse/lazy');
  return module.exports;
}

const assets = new Map<string, string>();

/**
 * A browser script the pages serve from their own origin (@simplewebauthn/browser's bundle),
 * read on first request and kept: inside the executable an SEA asset, beside a plain bundle in
 * lazy/, and from source the package's own file.
 */
export function browserAsset(name: 'webauthn-browser.js'): string {
  const known = assets.get(name);
  if (known !== undefined) return known;
  const executable = sea();
  let text: string;
  if (executable) text = executable.getAsset(name, 'utf8');
  else {
    const beside = path.join(__dirname, 'lazy', name);
    // The package exports only its module entry: its bundle is found beside that entry's folder.
    // (A name in a variable: the bundler leaves this source-only path alone.)
    const pkg = '@simplewebauthn/browser';
    text = fs.existsSync(beside)
      ? fs.readFileSync(beside, 'utf8')
      : fs.readFileSync(path.join(path.dirname(require.resolve(pkg)), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
  }
  assets.set(name, text);
  return text;
}

/** Spawning the packaged executable exactly as a user would, from an empty folder. */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import { tempDir } from './server';

export const EXE = path.resolve(__dirname, '..', '..', 'dist', 'gatehouse');

/** A folder holding only a copy of dist/gatehouse: no node_modules, no Node on PATH. */
export function exeFolder(t: Test): { dir: string; exe: string; env: NodeJS.ProcessEnv } {
  if (!fs.existsSync(EXE)) throw new Error('dist/gatehouse is missing: run npm run build (npm test does)');
  const dir = tempDir(t, 'gatehouse-exe-');
  const exe = path.join(dir, 'gatehouse');
  fs.copyFileSync(EXE, exe);
  fs.chmodSync(exe, 0o755);
  return { dir, exe, env: { HOME: dir, PATH: '/nonexistent', LANG: 'C.UTF-8' } };
}

/**
 * The commands of a doc's shell block marked `<!-- MARKER: … -->`, each with the `#   ` lines after
 * it: what running it prints (the docs' recipes are run as written).
 */
export function docSteps(doc: string, marker: string): Array<{ line: string; said: string[] }> {
  const block = new RegExp(`<!-- ${marker}:[^\\n]*-->\\n\`\`\`sh\\n([\\s\\S]*?)\\n\`\`\``).exec(doc);
  if (!block) throw new Error(`no <!-- ${marker}: --> shell block`);
  const steps: Array<{ line: string; said: string[] }> = [];
  for (const line of block[1].split('\n')) {
    if (line.startsWith('#')) steps[steps.length - 1].said.push(line.replace(/^#\s+/, ''));
    else steps.push({ line, said: [] });
  }
  return steps;
}

export interface ExeResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runExe(exe: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string; stdin?: string }): Promise<ExeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

export interface ServeHandle {
  child: ChildProcess;
  /** Where it listens (the "listening" line's url). */
  url: string;
  /** The address it names itself by: --public-url, or http://localhost:<port> for a loopback listener. */
  publicUrl: string;
  output: () => string;
  stop: () => Promise<number | null>;
}

export function serveExe(t: Test, exe: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<ServeHandle> {
  return new Promise((resolve, reject) => {
    const child = spawn(exe, ['serve', '--port', '0', ...args], { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let exited = false;
    const exit = new Promise<number | null>((r) => child.once('exit', (code) => ((exited = true), r(code))));
    const stop = async () => {
      if (!exited) child.kill('SIGTERM');
      return exit;
    };
    t.teardown(async () => {
      if (!exited) child.kill('SIGKILL');
      await exit;
    });
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 20000);
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /"event":"listening","url":"([^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        const given = args.indexOf('--public-url');
        const publicUrl = given >= 0 ? args[given + 1] : m[1].replace('://127.0.0.1:', '://localhost:');
        resolve({ child, url: m[1], publicUrl, output: () => out, stop });
      }
    });
    child.stderr!.on('data', (d) => (out += d));
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}`));
    });
  });
}

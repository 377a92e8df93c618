'use strict';
// One training run for the executable's code cache (scripts/code-cache.mjs): compiles the bundle as
// scripts/sea-main.cjs does (the same wrapper text), with the cache so far, runs it with the given
// arguments and, at exit, writes the cache of every function compiled by then.
// Usage: node code-cache-run.cjs BUNDLE CACHE [gatehouse arguments...]
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');

const [bundle, cacheFile, ...args] = process.argv.slice(2);
const source = `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(bundle, 'utf8').replace(/^#!.*/, '')}\n})`;
const cachedData = fs.existsSync(cacheFile) ? fs.readFileSync(cacheFile) : undefined;
const script = new vm.Script(source, { filename: 'gatehouse.cjs', cachedData });
if (cachedData && script.cachedDataRejected) throw new Error('the code cache of the previous training run was rejected');
process.argv = [process.argv[0], bundle, ...args];
process.once('exit', () => fs.writeFileSync(cacheFile, script.createCachedData()));
const mod = { exports: {} };
script.runInThisContext()(mod.exports, require, mod, bundle, path.dirname(bundle));

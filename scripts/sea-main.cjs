'use strict';
// The single executable's main script (scripts/build.mjs): it compiles the bundle, an asset, with a
// V8 code cache made at build time after the bundle ran `serve` to its first /ping and `stats`
// (scripts/code-cache.mjs). The executable's own code cache (useCodeCache) is made before anything
// runs, so it holds only the bundle's top level and every function start-up calls was compiled at
// each start; this one holds those functions too. The wrapper is the same text the build compiles.
const sea = require('node:sea');
const vm = require('node:vm');

const source = `(function (exports, require, module, __filename, __dirname) {${sea.getAsset('gatehouse.cjs', 'utf8').replace(/^#!.*/, '')}\n})`;
const script = new vm.Script(source, { filename: 'gatehouse.cjs', cachedData: new Uint8Array(sea.getAsset('gatehouse.cache')) });
script.runInThisContext()(module.exports, require, module, __filename, __dirname);

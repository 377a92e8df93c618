#!/usr/bin/env node
// Size libuv's pool before anything uses it: database reads and password hashes share it, and
// a signin burst must not queue every read behind hashes (hashing is also bounded in the core).
process.env.UV_THREADPOOL_SIZE ??= '8';

import { run } from '../src/cli/main';

// The HTTP server (Koa, the router, the pages) is loaded only by `serve`: an admin command starts
// without evaluating it.
run(process.argv, { serve: async (config) => (await import('../src/serve')).serve(config) }).then((code) => {
  process.exitCode = code;
});

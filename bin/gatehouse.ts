#!/usr/bin/env node
// Size libuv's pool before anything uses it: database reads and password hashes share it, and
// a signin burst must not queue every read behind hashes (hashing is also bounded in the core).
process.env.UV_THREADPOOL_SIZE ??= '8';

import { run } from '../src/cli/main';
import { serve } from '../src/http/serve';

run(process.argv, { serve }).then((code) => {
  process.exitCode = code;
});

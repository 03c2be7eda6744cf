// Writes the two V8 code caches of the bundle, as build/sea-main.cjs compiles it: run by the Node
// the executable carries, under the executable's V8 flags (V8 rejects a cache made under other
// flags). V8 compiles a function on its first call, and a cache holds the functions compiled when
// it is taken:
// - the start cache, taken after the bundle has run its `--help` path, which loads every module
//   the agent loads at start (the usage it prints is discarded by the build): the agent's start
//   then compiles none of them again;
// - the top-level cache, taken before anything ran, for `--version`: it reads only the bundle's
//   top level, where the start cache (1 MiB) took longer to read than it saves there.
// argv: bundle, start cache output, top-level cache output.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const { Script, constants: vmConstants } = require('node:vm');

const [bundle, startOutput, topLevelOutput] = process.argv.slice(2);
// As build/sea-main.cjs wraps it (the build fails when the executable rejects a cache).
const script = new Script('(function (exports, require, module, __filename, __dirname) {' + readFileSync(bundle, 'latin1') + '\n})', {
  filename: bundle,
  importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
writeFileSync(topLevelOutput, script.createCachedData());
process.argv = [process.argv[0], bundle, '--help'];
script.runInThisContext()(exports, require, module, bundle, __dirname);
// The `--help` path ends once its dynamic import has run: the event loop then empties.
process.once('beforeExit', () => writeFileSync(startOutput, script.createCachedData()));

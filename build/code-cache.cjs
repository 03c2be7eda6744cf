// Writes the V8 code cache of the bundle as build/sea-main.cjs compiles it: run by the Node the
// executable carries, under the executable's V8 flags (V8 rejects a cache made under other flags).
// argv: bundle, output.
'use strict';
const { readFileSync, writeFileSync } = require('node:fs');
const { compileFunction, constants: vmConstants } = require('node:vm');

const [bundle, output] = process.argv.slice(2);
const run = compileFunction(readFileSync(bundle, 'latin1'), ['exports', 'require', 'module', '__filename', '__dirname'], { filename: bundle, produceCachedData: true, importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
if (!run.cachedDataProduced) throw new Error('V8 produced no code cache for the bundle');
writeFileSync(output, run.cachedData);

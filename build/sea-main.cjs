// The single executable's main script: it runs the bundle, which the build appends to the
// executable after its last byte, outside every segment the loader maps. Node reads an SEA's main
// script from the mapped file and copies it into V8's heap; the file pages it read then stay in
// the process's RSS for as long as it runs (1.9 MiB: the bundle and its code cache). Read with
// read(2), the bytes pass through the page cache without ever being mapped.
// The trailer, the file's last 44 bytes: "BOOTLETC", then the offset and length of the bundle, of
// its start code cache and of its top-level code cache (build/code-cache.cjs), each a
// little-endian uint48 in 6 bytes.
'use strict';
const { closeSync, fstatSync, openSync, readSync } = require('node:fs');
const { Script, constants: vmConstants } = require('node:vm');

const TRAILER = 44;
const MAGIC = 'BOOTLETC';
const args = process.argv.slice(2);
// `--version` (kubeadm's preflight asks) runs only the bundle's top level: the same test as src/main.ts
// makes, here before the bundle exists.
const cacheAt = args.length === 1 && (args[0] === '--version' || args[0] === 'version') ? 32 : 20;
// /proc/self/exe, not process.execPath: it still opens this process's file after a package upgrade
// replaced the one at the path.
const fd = openSync('/proc/self/exe', 'r');
let source;
let cachedData;
try {
  const size = fstatSync(fd).size;
  const trailer = Buffer.alloc(TRAILER);
  readSync(fd, trailer, 0, TRAILER, size - TRAILER);
  if (trailer.toString('latin1', 0, 8) !== MAGIC) throw new Error('the bootlet executable has no bundle appended (was it stripped?): rebuild it with npm run build');
  const read = (at) => {
    const b = Buffer.allocUnsafe(trailer.readUIntLE(at + 6, 6));
    const from = trailer.readUIntLE(at, 6);
    for (let got = 0, n; got < b.length; got += n) {
      n = readSync(fd, b, got, b.length - got, from + got);
      if (n === 0) throw new Error('the bootlet executable is truncated: rebuild it with npm run build');
    }
    return b;
  };
  // The build refuses a bundle that is not ASCII, so latin1 is its exact text.
  source = read(8).toString('latin1');
  cachedData = read(cacheAt);
} finally {
  closeSync(fd);
}
// The bundle's one dynamic import (node:worker_threads, with the first big manifest) goes to Node's own loader.
// Wrapped as build/code-cache.cjs wraps it: a cache fits only the same source.
const script = new Script('(function (exports, require, module, __filename, __dirname) {' + source + '\n})', { filename: __filename, cachedData, importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
// A rejected cache (the executable's V8 flags differ from the build's) costs start-up time only.
if (script.cachedDataRejected) process.stderr.write('bootlet: the bundle\'s code cache was rejected (a slower start); rebuild the executable\n');
source = undefined;
cachedData = undefined;
script.runInThisContext()(exports, require, module, __filename, __dirname);

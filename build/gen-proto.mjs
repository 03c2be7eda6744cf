// Build step: each .proto bootlet speaks -> a JSON descriptor and TypeScript types under
// src/cri/generated/ (gitignored).
// - The descriptor: the agent ships as one executable, so no .proto file may be read at run time;
//   the JSON is imported by the client (grpc-transport.ts, containerd-events.ts, containerd-tasks.ts) and embedded by
//   the bundler.
// - The types: @grpc/proto-loader's proto-loader-gen-types, run with the options the decoder uses
//   (src/cri/decode-options.json, read by both), so each `X__Output` type is exactly the object the
//   decoder hands out and each `X` what the encoder accepts. A message gone from a .proto takes
//   its file with it.
// `--check` writes nothing: it generates into a temporary directory and fails when
// src/cri/generated/ differs (a .proto edited since the last `npm run gen`).
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const generated = join(root, 'src/cri/generated');
const PROTOS = {
  'cri.proto': 'cri-descriptor.json',
  'containerd-events.proto': 'containerd-events-descriptor.json',
  'containerd-tasks.proto': 'containerd-tasks-descriptor.json',
};

function writeDescriptors(outDir) {
  for (const [proto, json] of Object.entries(PROTOS)) {
    const parsed = new protobuf.Root();
    // Field names are camelCased here, at parse time: @grpc/proto-loader's fromJSON takes names
    // from the JSON as they are (its keepCase option only acts when it parses .proto text itself).
    parsed.loadSync(join(root, 'src/cri', proto), { keepCase: false });
    // Fails the build on a dangling type reference instead of at the first RPC.
    parsed.resolveAll();
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, json), JSON.stringify(parsed.toJSON(), null, 1) + '\n');
  }
}

/** decode-options.json as generator flags: `true` -> --name, a string -> --name=value. */
function generatorFlags() {
  const options = JSON.parse(readFileSync(join(root, 'src/cri/decode-options.json'), 'utf8'));
  return Object.entries(options).flatMap(([name, value]) => {
    if (value === false) return [];
    if (value === true) return [`--${name}`];
    if (typeof value === 'string') return [`--${name}=${value}`];
    throw new Error(`src/cri/decode-options.json: ${name}: want true, false or a string`);
  });
}

function writeTypes(typesDir) {
  const generator = createRequire(import.meta.url).resolve('@grpc/proto-loader/build/bin/proto-loader-gen-types.js');
  rmSync(typesDir, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [
      generator,
      ...generatorFlags(),
      '--grpcLib=@grpc/grpc-js',
      // Imports spelled as the rest of the source spells them (moduleResolution Bundler, esbuild).
      '--importFileExtension=.js',
      '-O',
      typesDir,
      ...Object.keys(PROTOS).map((p) => `src/cri/${p}`),
    ],
    // .proto paths relative to the checkout, so the "Original file:" headers do not depend on it.
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

function generate(outDir) {
  writeDescriptors(outDir);
  writeTypes(join(outDir, 'types'));
}

function files(dir, base = dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), base) : [relative(base, join(dir, e.name))],
  );
}

/** Files of `fresh` that are new or changed in `dir`, and files of `dir` that `fresh` no longer has. */
function differences(fresh, dir) {
  const want = files(fresh);
  const have = files(dir);
  return {
    changed: want.filter(
      (f) => !have.includes(f) || readFileSync(join(fresh, f), 'utf8') !== readFileSync(join(dir, f), 'utf8'),
    ),
    gone: have.filter((f) => !want.includes(f)),
  };
}

const fresh = mkdtempSync(join(tmpdir(), 'bootlet-gen-proto-'));
try {
  generate(fresh);
  const { changed, gone } = differences(fresh, generated);
  if (process.argv.includes('--check')) {
    if (changed.length + gone.length > 0) {
      console.error(
        `src/cri/generated/ does not match the .proto files (run npm run gen):\n  ${[...changed, ...gone].sort().join('\n  ')}`,
      );
      process.exitCode = 1;
    }
  } else {
    // Only what changed is written: unchanged files keep their times, so `build.mjs --if-missing`
    // and watchers do not see a change that is not one.
    for (const f of changed) {
      mkdirSync(dirname(join(generated, f)), { recursive: true });
      copyFileSync(join(fresh, f), join(generated, f));
    }
    for (const f of gone) rmSync(join(generated, f));
    console.log(`src/cri/generated/: ${changed.length} written, ${gone.length} removed`);
  }
} finally {
  rmSync(fresh, { recursive: true, force: true });
}

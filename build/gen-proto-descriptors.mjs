// Build step: each .proto bootlet speaks -> a JSON descriptor under src/cri/generated/.
// The agent ships as one executable, so no .proto file may be read at run time: the JSON is imported
// by the client (cri-client.ts, containerd-events.ts) and embedded by the bundler.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PROTOS = {
  'cri.proto': 'cri-descriptor.json',
  'containerd-events.proto': 'containerd-events-descriptor.json',
};

for (const [proto, json] of Object.entries(PROTOS)) {
  const parsed = new protobuf.Root();
  // Field names are camelCased here, at parse time: @grpc/proto-loader's fromJSON takes names from
  // the JSON as they are (its keepCase option only acts when it parses .proto text itself), and
  // cri-types.ts declares camelCase.
  parsed.loadSync(join(root, 'src/cri', proto), { keepCase: false });
  // Fails the build on a dangling type reference instead of at the first RPC.
  parsed.resolveAll();
  const outFile = join(root, 'src/cri/generated', json);
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, JSON.stringify(parsed.toJSON(), null, 1) + '\n');
  console.log(`wrote ${outFile}`);
}

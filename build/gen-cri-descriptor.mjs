// Build step: src/runtime/cri.proto -> src/runtime/generated/cri-descriptor.json.
// The agent ships as one executable, so no .proto file may be read at run time; the JSON descriptor
// is imported by src/runtime/cri-client.ts and embedded by the bundler.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoFile = join(root, 'src/runtime/cri.proto');
const outFile = join(root, 'src/runtime/generated/cri-descriptor.json');

const parsed = new protobuf.Root();
// Field names are camelCased here, at parse time: @grpc/proto-loader's fromJSON takes names from
// the JSON as they are (its keepCase option only acts when it parses .proto text itself), and
// cri-types.ts declares camelCase.
parsed.loadSync(protoFile, { keepCase: false });
// Fails the build on a dangling type reference instead of at the first RPC.
parsed.resolveAll();

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(parsed.toJSON(), null, 1) + '\n');
console.log(`wrote ${outFile}`);

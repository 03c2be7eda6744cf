// Build step: src/runtime/containerd-events.proto -> src/runtime/generated/containerd-events-descriptor.json.
// As for the CRI descriptor: the agent is one executable and reads no .proto at run time; the JSON
// is imported by src/runtime/containerd-events.ts and embedded by the bundler.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const protoFile = join(root, 'src/runtime/containerd-events.proto');
const outFile = join(root, 'src/runtime/generated/containerd-events-descriptor.json');

const parsed = new protobuf.Root();
// camelCase at parse time, as gen-cri-descriptor does: proto-loader's fromJSON keeps JSON names.
parsed.loadSync(protoFile, { keepCase: false });
parsed.resolveAll();

mkdirSync(dirname(outFile), { recursive: true });
writeFileSync(outFile, JSON.stringify(parsed.toJSON(), null, 1) + '\n');
console.log(`wrote ${outFile}`);

// The entry of the manifest-decoding worker thread (see decode-off-thread.ts): bytes in, a
// DecodedManifest out, one message at a time.
import { parentPort } from 'node:worker_threads';
import { decodeManifest } from './decode-manifest';

parentPort?.on('message', (m: { id: number; bytes: Uint8Array }) => {
  parentPort?.postMessage({ id: m.id, result: decodeManifest(Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength)) });
});

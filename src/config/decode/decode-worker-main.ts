// The entry of the manifest-decoding worker thread (see decode-off-thread.ts): bytes in, a
// DecodedManifest (or, for the HTTP source, a DecodedPodSet) out, one message at a time.
import { parentPort } from 'node:worker_threads';
import { decodeManifest, decodePodOrList } from './decode-manifest';

parentPort?.on('message', (m: { id: number; bytes: Uint8Array; list?: boolean }) => {
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  parentPort?.postMessage({ id: m.id, result: m.list ? decodePodOrList(bytes) : decodeManifest(bytes) });
});

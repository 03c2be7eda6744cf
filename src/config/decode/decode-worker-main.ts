// The entry of the manifest-decoding worker thread (see decode-off-thread.ts): bytes in, a
// DecodedManifest (or, when asked, the whole loaded manifest) out, one message at a time.
import { parentPort } from 'node:worker_threads';
import { decodeManifest } from './decode-manifest';
import { loadManifest } from '../manifest';
import type { WorkerReply, WorkerRequest } from './decode-off-thread';

parentPort?.on('message', (m: WorkerRequest) => {
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  const reply: WorkerReply = m.load
    ? { id: m.id, loaded: loadManifest(m.load.file, bytes, m.load.nodeName, new Date(m.load.nowMs)) }
    : { id: m.id, decoded: decodeManifest(bytes) };
  parentPort?.postMessage(reply);
});

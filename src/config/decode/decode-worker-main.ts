// The entry of the manifest-decoding worker thread (see decode-off-thread.ts): bytes in, a
// DecodedManifest (or, when asked, the whole loaded manifest, or the HTTP source's Pod or PodList) out, one message at a time.
import { parentPort } from 'node:worker_threads';
import { decodeManifest, decodePodOrList } from './decode-manifest';
import { loadManifest } from '../manifest';
import type { WorkerReady, WorkerReply, WorkerRequest } from './decode-off-thread';

parentPort?.on('message', (m: WorkerRequest) => {
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength);
  const reply: WorkerReply = m.load
    ? { id: m.id, loaded: loadManifest(m.load.file, bytes, m.load.nodeName, new Date(m.load.nowMs)) }
    : m.list
      ? { id: m.id, list: decodePodOrList(bytes) }
      : { id: m.id, decoded: decodeManifest(bytes) };
  parentPort?.postMessage(reply);
});
// Loaded (from source, tsx compiled this file first): the deadline of a manifest starts now.
parentPort?.postMessage({ ready: true } satisfies WorkerReady);

// Decodes manifests so that no single file holds up the agent: small files (nearly all of them) on
// the event loop, where they take a few milliseconds; big ones in a worker thread with its own heap
// limit and a deadline, so a file that is slow or memory-hungry to parse costs that thread, never
// the agent. The worker is started on demand and stopped when idle, so an agent whose manifests
// are all small never pays for it.
import { Worker } from 'node:worker_threads';
import { decodeManifest, decodePodOrList, type DecodedManifest, type DecodedPodSet } from './decode-manifest';
import { INLINE_PARSE_MAX_BYTES } from '../parse/limits';
import { errorMessage } from '../../util/error-message';

/** The worker's code, put in by the build (build/build.mjs); undefined when running from source. */
declare const __BOOTLET_DECODE_WORKER__: string | undefined;

/** A big manifest that takes longer than this is refused; even 10 MiB of YAML is refused by count far sooner. */
const DECODE_DEADLINE_MS = 10_000;
/** Heap of the worker: far above what a manifest within the limits needs. */
const WORKER_HEAP_MB = 128;
const WORKER_IDLE_MS = 5_000;

export interface ManifestDecoder {
  decode(bytes: Buffer): Promise<DecodedManifest>;
  /** A Pod or a PodList (the HTTP source's answer), with the same limits and thread. */
  decodeList(bytes: Buffer): Promise<DecodedPodSet>;
  close(): Promise<void>;
}

export interface ManifestDecoderOptions {
  /** Files above this size go to the worker. */
  readonly inlineMaxBytes?: number;
  readonly deadlineMs?: number;
  readonly idleMs?: number;
}

function startWorker(): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 };
  if (typeof __BOOTLET_DECODE_WORKER__ === 'string') return new Worker(__BOOTLET_DECODE_WORKER__, { eval: true, resourceLimits });
  // From source (tests): the TypeScript entry, through tsx.
  const entry = new URL('./decode-worker-main.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}

/** Failures are the same for both kinds of job. */
type Failure = Extract<DecodedManifest, { ok: false }>;

interface Job {
  readonly bytes: Buffer;
  readonly list: boolean;
  readonly resolve: (r: DecodedManifest | DecodedPodSet | Failure) => void;
}

export function createManifestDecoder(opts: ManifestDecoderOptions = {}): ManifestDecoder {
  const inlineMax = opts.inlineMaxBytes ?? INLINE_PARSE_MAX_BYTES;
  const deadlineMs = opts.deadlineMs ?? DECODE_DEADLINE_MS;
  const idleMs = opts.idleMs ?? WORKER_IDLE_MS;
  const queue: Job[] = [];
  let worker: Worker | undefined;
  let busy = false;
  let nextId = 1;
  let idleTimer: NodeJS.Timeout | undefined;
  let closed = false;

  const stopWorker = (): void => {
    const w = worker;
    worker = undefined;
    if (w) void w.terminate().catch(() => undefined);
  };

  /** Runs one job in the worker; every way the worker can fail becomes a refusal of that file. */
  const runJob = (job: Job): Promise<void> =>
    new Promise<void>((done) => {
      let w: Worker;
      try {
        w = worker ??= startWorker();
      } catch (err) {
        job.resolve({ ok: false, message: `could not start the manifest parser thread: ${errorMessage(err)}` });
        done();
        return;
      }
      const id = nextId++;
      let settled = false;
      const finish = (result: DecodedManifest | DecodedPodSet, restart: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        w.off('message', onMessage);
        w.off('error', onError);
        w.off('exit', onExit);
        if (restart) stopWorker();
        job.resolve(result);
        done();
      };
      const onMessage = (m: { id: number; result: DecodedManifest | DecodedPodSet }): void => {
        if (m.id === id) finish(m.result, false);
      };
      const onError = (err: Error): void => {
        const oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
        finish({ ok: false, limit: true, message: oom ? `refused: parsing needed more than ${WORKER_HEAP_MB} MiB of memory` : `could not parse: ${err.message}` }, true);
      };
      const onExit = (): void => finish({ ok: false, message: 'could not parse: the parser thread stopped' }, true);
      const timer = setTimeout(() => finish({ ok: false, limit: true, message: `refused: parsing took longer than ${deadlineMs / 1000} s` }, true), deadlineMs);
      w.on('message', onMessage).on('error', onError).on('exit', onExit);
      w.postMessage({ id, bytes: job.bytes, list: job.list });
    });

  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    if (idleTimer) clearTimeout(idleTimer);
    try {
      for (let job = queue.shift(); job; job = queue.shift()) await runJob(job);
    } finally {
      busy = false;
      if (!closed) {
        idleTimer = setTimeout(stopWorker, idleMs);
        idleTimer.unref();
      }
    }
  };

  const offThread = <R>(bytes: Buffer, list: boolean): Promise<R> => {
    if (closed) return Promise.resolve({ ok: false, message: 'the agent is stopping' } as R);
    return new Promise<R>((resolve) => {
      queue.push({ bytes, list, resolve: (r) => resolve(r as R) });
      void pump();
    });
  };

  return {
    decode(bytes) {
      if (bytes.length <= inlineMax) return Promise.resolve(decodeManifest(bytes));
      return offThread<DecodedManifest>(bytes, false);
    },
    decodeList(bytes) {
      if (bytes.length <= inlineMax) return Promise.resolve(decodePodOrList(bytes));
      return offThread<DecodedPodSet>(bytes, true);
    },
    async close() {
      closed = true;
      if (idleTimer) clearTimeout(idleTimer);
      for (const job of queue.splice(0)) job.resolve({ ok: false, message: 'the agent is stopping' });
      const w = worker;
      worker = undefined;
      if (w) await w.terminate().catch(() => undefined);
    },
  };
}

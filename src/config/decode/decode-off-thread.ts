// Decodes manifests so that no single file holds up the agent: small files (nearly all of them) on
// the event loop, where they take a few milliseconds; big ones in a worker thread with its own heap
// limit and a deadline, so a file that is slow or memory-hungry to parse costs that thread, never
// the agent. The worker is started on demand and stopped when idle, so an agent whose manifests
// are all small never pays for it.
import { getAsset, isSea } from 'node:sea';
import type { Worker } from 'node:worker_threads';
import { decodeManifest, decodePodOrList, type DecodedManifest, type DecodedPodSet } from './decode-manifest';
import { completeManifest, loadManifest, type LoadResult } from '../manifest';
import { INLINE_PARSE_MAX_BYTES, INLINE_PARSE_MAX_STRUCTURE } from '../parse/limits';
import { errorMessage } from '../../util/error-message';

/**
 * The worker's code in the executable: an SEA asset (build/build.mjs), read only when a big manifest
 * starts the worker, so its source never sits in the agent's heap.
 */
const WORKER_ASSET = 'decode-worker.cjs';

/** A big manifest that takes longer than this is refused; even 10 MiB of YAML is refused by count far sooner. */
const DECODE_DEADLINE_MS = 10_000;
/**
 * The thread's start is not the file's parse, so it has its own deadline: on a loaded machine (or
 * from source, where tsx compiles the worker first) starting takes seconds, and a file's deadline
 * that counted them would refuse a good manifest.
 */
const WORKER_START_DEADLINE_MS = 60_000;
/** Heap of the worker: far above what a manifest within the limits needs. */
const WORKER_HEAP_MB = 128;
const WORKER_IDLE_MS = 5_000;

export interface ManifestDecoder {
  decode(bytes: Buffer): Promise<DecodedManifest>;
  /**
   * The whole of loadManifest: a costly file is decoded, defaulted, validated and given its
   * identity in the worker (the rules and the hash cost 40-60 ms on the biggest pod allowed), so
   * the event loop only receives the result.
   */
  load(file: string, bytes: Buffer, nodeName: string, now: Date): Promise<LoadResult>;
  /** A Pod or a PodList (the HTTP source's answer), with the same limits and thread. */
  decodeList(bytes: Buffer): Promise<DecodedPodSet>;
  close(): Promise<void>;
}

/** A refusal: of the file, or by the thread itself (deadline, memory, stopping). */
type Failure = Extract<DecodedManifest, { ok: false }>;

type Outcome =
  | { readonly decoded: DecodedManifest }
  | { readonly loaded: LoadResult }
  | { readonly list: DecodedPodSet }
  | { readonly failed: Failure };

/** The thread's own refusal, or (never expected) an answer of another kind than asked. */
function failureOf(r: Outcome): Failure {
  return 'failed' in r ? r.failed : { ok: false, message: 'could not parse: unexpected answer from the parser thread' };
}

/** What the worker is asked: decode a manifest (and load it, when `load` is given) or a Pod or PodList. */
export interface WorkerRequest {
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly load?: { readonly file: string; readonly nodeName: string; readonly nowMs: number };
  readonly list?: boolean;
}

export type WorkerReply = { readonly id: number } & Outcome;

/** The worker's first message: its code is loaded and it takes requests. */
export interface WorkerReady {
  readonly ready: true;
}

export interface ManifestDecoderOptions {
  /** Files above this size go to the worker. */
  readonly inlineMaxBytes?: number;
  /** And files with more structure bytes than this. */
  readonly inlineMaxStructure?: number;
  readonly deadlineMs?: number;
  readonly startDeadlineMs?: number;
  readonly idleMs?: number;
}

const COMMA = 0x2c;
const NEWLINE = 0x0a;
const DASH = 0x2d;
const COLON = 0x3a;
const BRACKET = 0x5b;
const BRACE = 0x7b;

/** Bytes that start or separate values: counted in one pass, far cheaper than parsing. */
export function structureBytes(bytes: Buffer, stopAbove = Infinity): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === COMMA || b === NEWLINE || b === DASH || b === COLON || b === BRACKET || b === BRACE) {
      if (++n > stopAbove) return n;
    }
  }
  return n;
}

/** Whether a manifest is decoded on the event loop (cheap to parse) rather than in the worker. */
export function decodesInline(bytes: Buffer, opts: ManifestDecoderOptions = {}): boolean {
  const maxStructure = opts.inlineMaxStructure ?? INLINE_PARSE_MAX_STRUCTURE;
  return (
    bytes.length <= (opts.inlineMaxBytes ?? INLINE_PARSE_MAX_BYTES) &&
    structureBytes(bytes, maxStructure) <= maxStructure
  );
}

/** node:worker_threads is loaded with the first big file: an agent whose manifests are all small never loads it. */
async function spawnWorker(): Promise<Worker> {
  const { Worker } = await import('node:worker_threads');
  const resourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 };
  if (isSea()) return new Worker(getAsset(WORKER_ASSET, 'utf8'), { eval: true, resourceLimits });
  // From source (tests): the TypeScript entry, through tsx.
  const entry = new URL('./decode-worker-main.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}

/** A worker that has said it is ready; one that fails, stops or stays silent past the deadline is terminated and thrown. */
async function startWorker(deadlineMs: number): Promise<Worker> {
  const w = await spawnWorker();
  return new Promise<Worker>((resolve, reject) => {
    const finish = (err: Error | undefined): void => {
      clearTimeout(timer);
      w.off('message', onMessage).off('error', finish).off('exit', onExit);
      if (!err) return resolve(w);
      void w.terminate().catch(() => undefined);
      reject(err);
    };
    const onMessage = (m: Partial<WorkerReady>): void => {
      if (m.ready === true) finish(undefined);
    };
    const onExit = (): void => finish(new Error('the thread stopped while starting'));
    const timer = setTimeout(() => finish(new Error(`not ready after ${deadlineMs / 1000} s`)), deadlineMs);
    w.on('message', onMessage).on('error', finish).on('exit', onExit);
  });
}

interface Job {
  readonly bytes: Buffer;
  readonly load?: WorkerRequest['load'];
  readonly list?: boolean;
  readonly resolve: (r: Outcome) => void;
}

export function createManifestDecoder(opts: ManifestDecoderOptions = {}): ManifestDecoder {
  const deadlineMs = opts.deadlineMs ?? DECODE_DEADLINE_MS;
  const startDeadlineMs = opts.startDeadlineMs ?? WORKER_START_DEADLINE_MS;
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
  const runJob = async (job: Job): Promise<void> => {
    let w: Worker;
    try {
      w = worker ??= await startWorker(startDeadlineMs);
    } catch (err) {
      job.resolve({
        failed: { ok: false, message: `could not start the manifest parser thread: ${errorMessage(err)}` },
      });
      return;
    }
    if (closed) {
      // close() ran while the thread was being made: it stops with the agent.
      stopWorker();
      job.resolve({ failed: { ok: false, message: 'the agent is stopping' } });
      return;
    }
    return new Promise<void>((done) => {
      const id = nextId++;
      let settled = false;
      const finish = (result: Outcome, restart: boolean): void => {
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
      const onMessage = (m: WorkerReply): void => {
        if (m.id === id) finish(m, false);
      };
      const onError = (err: Error): void => {
        const oom = (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
        finish(
          {
            failed: {
              ok: false,
              limit: true,
              message: oom
                ? `parsing needed more than ${WORKER_HEAP_MB} MiB of memory`
                : `could not parse: ${err.message}`,
            },
          },
          true,
        );
      };
      const onExit = (): void =>
        finish({ failed: { ok: false, message: 'could not parse: the parser thread stopped' } }, true);
      const timer = setTimeout(
        () =>
          finish(
            { failed: { ok: false, limit: true, message: `parsing took longer than ${deadlineMs / 1000} s` } },
            true,
          ),
        deadlineMs,
      );
      w.on('message', onMessage).on('error', onError).on('exit', onExit);
      const request: WorkerRequest = { id, bytes: job.bytes, load: job.load, list: job.list };
      w.postMessage(request);
    });
  };

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

  const offThread = (bytes: Buffer, ask: Pick<Job, 'load' | 'list'> = {}): Promise<Outcome> => {
    if (closed) return Promise.resolve({ failed: { ok: false, message: 'the agent is stopping' } });
    return new Promise((resolve) => {
      queue.push({ bytes, ...ask, resolve });
      void pump();
    });
  };

  return {
    async decode(bytes) {
      if (decodesInline(bytes, opts)) return decodeManifest(bytes);
      const r = await offThread(bytes);
      return 'decoded' in r ? r.decoded : failureOf(r);
    },
    async load(file, bytes, nodeName, now) {
      if (decodesInline(bytes, opts)) return loadManifest(file, bytes, nodeName, now);
      const r = await offThread(bytes, { load: { file, nodeName, nowMs: now.getTime() } });
      // The thread's own refusal (deadline, memory) is reported as the file's, with its name.
      return 'loaded' in r ? r.loaded : completeManifest(file, failureOf(r), nodeName, now);
    },
    async decodeList(bytes) {
      if (decodesInline(bytes, opts)) return decodePodOrList(bytes);
      const r = await offThread(bytes, { list: true });
      return 'list' in r ? r.list : failureOf(r);
    },
    async close() {
      closed = true;
      if (idleTimer) clearTimeout(idleTimer);
      for (const job of queue.splice(0)) job.resolve({ failed: { ok: false, message: 'the agent is stopping' } });
      const w = worker;
      worker = undefined;
      if (w) await w.terminate().catch(() => undefined);
    },
  };
}

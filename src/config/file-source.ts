// The manifest directory (or single manifest file) as a source of desired static pods: a watcher
// (manifest-watcher.ts) and full scans (manifest-scanner.ts) say which names to look at, a serial
// queue per name (manifest-queue.ts) looks at each, so an older read can never overtake a newer
// one, and file-source-pods.ts turns what was found into the desired set and its events. What
// counts is always what is on disk when the file is read (stably, see read-manifest.ts).
import { createHash } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { resolve } from 'node:path';
import type { Logger } from '../log/logger';
import type { ConfigSourceEvents } from './types';
import { ignoredNameReason, OnceSet } from './ignore';
import { readManifestFile, type ReadOptions } from './read-manifest';
import { createManifestDecoder } from './decode/decode-off-thread';
import { UnchangedFiles } from './unchanged-files';
import { FileSourcePods } from './file-source-pods';
import { ManifestQueue } from './manifest-queue';
import { ManifestScanner } from './manifest-scanner';
import { ManifestWatcher } from './manifest-watcher';
import { warmUpManifestLoading } from './warm-up';
import { ownOutputFiles, ownOutputReason } from './own-output';
import { cpuTurn } from '../util/cpu-turn';

export interface FileSourceOptions {
  /** A directory of manifests, or a single manifest file. */
  readonly path: string;
  readonly nodeName: string;
  /** Full rescan period; the kubelet's fileCheckFrequency, 20 s by default. */
  readonly fileCheckFrequencyMs?: number;
  readonly logger: Logger;
  readonly events: ConfigSourceEvents;
  readonly now?: () => Date;
  /**
   * Quiet time after an in-place writer's event before the name is looked at: the events of one
   * write (create, modify) come together into one look. Short, since the read itself waits for a
   * file still being written (read-manifest.ts); 10 ms here was most of the time from kubeadm's
   * write to its manifests' looks.
   */
  readonly eventDebounceMs?: number;
  /** How often a missing manifest path is looked for again. */
  readonly missingPathRetryMs?: number;
  readonly read?: ReadOptions;
}

export interface FileSource {
  stop(): Promise<void>;
  /** A full scan now; resolves when it is done. */
  rescan(): Promise<void>;
  /**
   * The pod of `file`, to which bootlet gave `computedUid`, is the running pod `runtimeUid` that a
   * kubelet started from the same manifest. From now on, and for as long as the file's content gives
   * that same computed UID, its pod is emitted under `runtimeUid`; any edit gives a fresh UID as
   * usual. The change is emitted before this returns (an UPDATE whose pod has `computedUid`). False,
   * and nothing changed, when it cannot apply: the file's pod is another by now, or the UID is taken.
   */
  adoptIdentity(file: string, computedUid: string, runtimeUid: string): boolean;
}

/**
 * A full scan is told downstream this many files at a time, in name order (so the first file by
 * name still wins a key), yielding to the event loop between chunks: one batch of 2,000 new files
 * was held for the whole scan and then told in one go, which stalled the agent for seconds.
 */
const SCAN_CHUNK = 64;

/** What a read finds when the stat before it found no file. */
const MISSING = { kind: 'missing' } as const;

/** A file still being written is looked at again after this long. */
const CHANGING_RETRY_MS = 250;

/**
 * A held manifest that is not there any more is removed only once it has stayed away this long. An
 * editor that keeps a backup by renaming (emacs, vim's writebackup) moves the file to `file~` and
 * then writes a new one: a look in between found no file, removed the pod and started it again from
 * the new file, even when the content was the same (the soak's emacs saves, under load).
 */
export const VANISHED_CONFIRM_MS = 200;

export function startFileSource(opts: FileSourceOptions): FileSource {
  const root = resolve(opts.path);
  const log = opts.logger.with({ source: 'file' });
  const now = opts.now ?? (() => new Date());
  const debounceMs = opts.eventDebounceMs ?? 2;

  const pods = new FileSourcePods(log, opts.events);
  const decoder = createManifestDecoder();
  /** Digest of the bytes (or read error) last handled per file: unchanged content is not reprocessed. */
  const lastDigest = new Map<string, string>();
  const unchangedFiles = new UnchangedFiles();
  const skippedOnce = new OnceSet();
  /** Held manifests found missing, and when they were first found so. */
  const vanishedAt = new Map<string, number>();
  // Never read as a manifest; an unchanged refusal is not handled again (lastDigest), so writes to it cost a stat.
  const ownFiles = ownOutputFiles();
  const ownOutput = opts.read?.ownOutput ?? ((st: { dev: number; ino: number }) => ownOutputReason(st, ownFiles));
  let stopped = false;

  const logSkip = (file: string, reason: string): void => {
    if (skippedOnce.first(file)) log.v(2).info('Skipping file in manifest directory', { file, reason });
  };

  const watcher = new ManifestWatcher({
    log,
    // A name renamed into place (no in-place write seen) is complete: it is looked at at once. An
    // in-place writer's events wait out the quiet time, since editors write in bursts.
    onName: (file) => queue.schedule(file, watcher.lastWriteAt(file) === undefined ? 0 : debounceMs),
    onDirectory: () => scanner.checkPathSoon(),
    onIgnored: logSkip,
  });

  const forget = (file: string): void => {
    vanishedAt.delete(file);
    lastDigest.delete(file);
    unchangedFiles.forget(file);
    watcher.forget(file);
    pods.forget(file);
  };

  /** Looks at one name in the manifest path and brings the desired set in line with it. */
  const look = async (file: string): Promise<void> => {
    const reason = ignoredNameReason(file);
    if (reason !== undefined) {
      logSkip(file, reason);
      forget(file);
      return;
    }
    const seen = await unchangedFiles.check(file);
    if (seen === 'unchanged') return;
    const readStart = Date.now();
    const r =
      seen === 'missing'
        ? MISSING
        : await readManifestFile(file, {
            ...opts.read,
            ownOutput,
            lastWriteEventAt: watcher.watching ? () => watcher.lastWriteAt(file) : undefined,
          });
    if (stopped) return;
    pods.holdForTurn();
    if (r.kind !== 'missing') vanishedAt.delete(file);
    switch (r.kind) {
      case 'missing': {
        if (pods.holds(file)) {
          const t = Date.now();
          const since = vanishedAt.get(file) ?? t;
          if (t - since < VANISHED_CONFIRM_MS) {
            if (!vanishedAt.has(file))
              log.v(4).info('Manifest file gone; its pod is removed if it stays away', {
                file,
                confirmMs: VANISHED_CONFIRM_MS,
              });
            vanishedAt.set(file, since);
            // A new event for the name (the new file) looks sooner; this look confirms the removal.
            queue.schedule(file, VANISHED_CONFIRM_MS - (t - since) + 1);
            return;
          }
        }
        skippedOnce.forget(file);
        forget(file);
        scanner.checkPathSoon();
        return;
      }
      case 'not-file':
        if (skippedOnce.first(file)) {
          if (r.what === 'directory') log.info('Not recursing into sub-directory of manifest path', { path: file });
          else
            log.error('Skipping manifest path entry that is not a regular file (fifo, socket or device)', {
              path: file,
            });
        }
        forget(file);
        return;
      case 'changing':
        log.v(4).info('Manifest file still changing; looking again shortly', { file });
        queue.schedule(file, CHANGING_RETRY_MS);
        return;
      case 'error': {
        unchangedFiles.forget(file);
        const digest = `error:${r.message}`;
        if (lastDigest.get(file) === digest) return;
        lastDigest.set(file, digest);
        pods.refuse({ file, message: r.message });
        return;
      }
      case 'ok':
        break;
    }
    skippedOnce.forget(file);
    watcher.readFrom(file, readStart);
    unchangedFiles.remember(file, r.stat);
    const digest = createHash('sha256').update(r.bytes).digest('hex');
    if (lastDigest.get(file) === digest) return;
    lastDigest.set(file, digest);
    // The parse is the costly part of a look: one per turn of the event loop (util/cpu-turn.ts).
    await cpuTurn();
    if (stopped) return;
    const loaded = await decoder.load(file, r.bytes, opts.nodeName, now());
    if (stopped) return;
    pods.holdForTurn();
    // A broken edit is not a deletion: the file's last good pod (if any) stays.
    if ('error' in loaded) pods.refuse(loaded.error);
    else pods.accept(file, loaded.pod, loaded.warnings);
  };

  const queue = new ManifestQueue(look, log);

  const scanner = new ManifestScanner({
    root,
    log,
    watcher,
    periodMs: opts.fileCheckFrequencyMs ?? 20_000,
    missingRetryMs: opts.missingPathRetryMs ?? 1000,
    checkDelayMs: debounceMs,
    // Files that were held but are not listed any more are looked at too: they are gone.
    pass: async (names) => {
      const files = [...new Set([...names, ...pods.files()])].sort();
      for (let i = 0; i < files.length && !stopped; i += SCAN_CHUNK) {
        if (i > 0) await yieldToEventLoop();
        await pods.batch(async () => {
          await Promise.all(files.slice(i, i + SCAN_CHUNK).map((f) => queue.run(f)));
        });
      }
      log.v(4).info('Manifest path rescanned', { path: root, files: pods.files().length });
    },
    onFirstScan: () => {
      opts.events.ready();
      // Nothing read yet (kubeadm writes its manifests after starting the kubelet): the loading
      // code is compiled now, on a turn of its own, not inside the first manifests' way.
      if (pods.files().length === 0) setImmediate(() => stopped || warmUpManifestLoading(opts.nodeName));
    },
  });
  scanner.start();

  return {
    rescan: () => scanner.rescan(),
    adoptIdentity: (file, computedUid, runtimeUid) => !stopped && pods.adoptIdentity(file, computedUid, runtimeUid),
    async stop() {
      stopped = true;
      pods.close();
      queue.stop();
      const scans = scanner.stop();
      await watcher.close();
      await decoder.close();
      await Promise.all([scans, queue.idle()]);
    },
  };
}

// The manifest directory (or single manifest file) as a source of desired static pods.
//
// Events from the watcher only say "look at this name again"; what counts is always what is on disk
// when the file is read (stably, see read-manifest.ts). A full rescan at start and every
// fileCheckFrequency catches whatever the watcher missed (inotify overflow, a symlink's target
// changing, the directory being replaced). Every change to a name goes through one serial queue per
// name, so an older read can never overtake a newer one.
import { readdir, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from '../log/logger';
import type { ConfigSourceEvents, ManifestError } from './types';
import { ignoredNameReason, isUtf8Name, OnceSet, printableName } from './ignore';
import { readManifestFile, type ReadOptions } from './read-manifest';
import { createManifestDecoder } from './decode/decode-off-thread';
import { DesiredPods } from './desired-pods';
import { UnchangedFiles } from './unchanged-files';

/** Names whose last write time is kept (for the quiet-file check); far above any real directory. */
const MAX_TRACKED_WRITES = 4096;

export interface FileSourceOptions {
  /** A directory of manifests, or a single manifest file. */
  readonly path: string;
  readonly nodeName: string;
  /** Full rescan period; the kubelet's fileCheckFrequency, 20 s by default. */
  readonly fileCheckFrequencyMs?: number;
  readonly logger: Logger;
  readonly events: ConfigSourceEvents;
  readonly now?: () => Date;
  /** Quiet time after a watcher event before the name is looked at (editors write in bursts). */
  readonly eventDebounceMs?: number;
  /** How often a missing manifest path is looked for again. */
  readonly missingPathRetryMs?: number;
  readonly read?: ReadOptions;
}

export interface FileSource {
  stop(): Promise<void>;
  /** A full scan now; resolves when it is done. */
  rescan(): Promise<void>;
}

/** Per-name serial queue state. */
interface NameState {
  timer?: NodeJS.Timeout;
  running?: Promise<void>;
  again: boolean;
}

export function startFileSource(opts: FileSourceOptions): FileSource {
  const root = resolve(opts.path);
  const log = opts.logger.with({ source: 'file' });
  const events = opts.events;
  const now = opts.now ?? (() => new Date());
  const checkEvery = opts.fileCheckFrequencyMs ?? 20_000;
  const debounceMs = opts.eventDebounceMs ?? 10;
  const missingRetryMs = opts.missingPathRetryMs ?? 1000;
  const changingRetryMs = 250;

  const desired = new DesiredPods();
  const decoder = createManifestDecoder();
  /** Digest of the bytes (or read error) last handled per file: unchanged content is not reprocessed. */
  const lastDigest = new Map<string, string>();
  const unchangedFiles = new UnchangedFiles();
  const names = new Map<string, NameState>();
  const skippedOnce = new OnceSet();
  const badNames = new OnceSet();
  /** Last in-place write event per file (raw inotify "change"): such a file may be half-written. */
  const lastWriteAt = new Map<string, number>();
  let watcher: FSWatcher | undefined;
  /** The directory being watched, or undefined (missing path, or single-file mode not started). */
  let watchedDir: string | undefined;
  /** Inode of the watched directory: a directory replaced between two scans needs a new watch. */
  let watchedIno: number | undefined;
  /** In single-file mode, the only name that matters. */
  let singleFile: string | undefined;
  let stopped = false;
  let readySent = false;
  let pathMissingLogged = false;
  let scanning: Promise<void> | undefined;
  let rescanTimer: NodeJS.Timeout | undefined;
  let missingTimer: NodeJS.Timeout | undefined;

  /** Files loaded since the last flush, to be logged as accepted unless they lost a key conflict. */
  const loadedFiles = new Set<string>();
  /** While above zero (a full scan runs), changes are collected and flushed once at the end. */
  let batchDepth = 0;

  /** Computes the desired-set difference, logs it and hands it downstream. */
  const flush = (): void => {
    if (batchDepth > 0 || stopped) return;
    const change = desired.reconcile();
    for (const e of change.errors) reportError(e);
    for (const file of [...loadedFiles].sort()) {
      const pod = desired.podOfFile(file);
      if (pod && !desired.isLosing(file)) log.info('Static pod manifest accepted', { pod: pod.key, uid: pod.uid, file });
    }
    for (const u of change.updates) {
      if (u.op === 'REMOVE') log.info('Static pod removed from desired set', { pod: u.pod.key, uid: u.pod.uid, file: u.pod.file });
      // A file's pod that takes over a key because its rival went away is accepted now.
      else if (!loadedFiles.has(u.pod.file)) log.info('Static pod manifest accepted', { pod: u.pod.key, uid: u.pod.uid, file: u.pod.file });
    }
    loadedFiles.clear();
    for (const u of change.updates) {
      if (stopped) return;
      events.update(u);
    }
  };

  const reportError = (e: ManifestError): void => {
    if (stopped) return;
    log.error('Static pod manifest refused', { file: e.file, err: e.message });
    events.error(e);
  };

  const forget = (file: string): void => {
    lastDigest.delete(file);
    unchangedFiles.forget(file);
    lastWriteAt.delete(file);
    if (!desired.podOfFile(file)) return;
    desired.dropFile(file);
    flush();
  };

  /** Looks at one name in the manifest directory and brings the desired set in line with it. */
  const processName = async (file: string): Promise<void> => {
    const reason = ignoredNameReason(file);
    if (reason !== undefined) {
      if (skippedOnce.first(file)) log.v(2).info('Skipping file in manifest directory', { file, reason });
      forget(file);
      return;
    }
    if (await unchangedFiles.unchanged(file)) return;
    const readStart = Date.now();
    const r = await readManifestFile(file, { ...opts.read, lastWriteEventAt: watcher ? () => lastWriteAt.get(file) : undefined });
    if (stopped) return;
    switch (r.kind) {
      case 'missing':
        skippedOnce.forget(file);
        forget(file);
        checkRootSoon();
        return;
      case 'not-file':
        if (skippedOnce.first(file)) {
          if (r.what === 'directory') log.info('Not recursing into sub-directory of manifest path', { path: file });
          else log.error('Skipping manifest path entry that is not a regular file (fifo, socket or device)', { path: file });
        }
        forget(file);
        return;
      case 'changing':
        log.v(4).info('Manifest file still changing; looking again shortly', { file });
        schedule(file, changingRetryMs);
        return;
      case 'error': {
        unchangedFiles.forget(file);
        const digest = `error:${r.message}`;
        if (lastDigest.get(file) === digest) return;
        lastDigest.set(file, digest);
        reportError({ file, message: r.message });
        return;
      }
      case 'ok':
        break;
    }
    skippedOnce.forget(file);
    const lastWrite = lastWriteAt.get(file);
    if (lastWrite !== undefined && lastWrite < readStart) lastWriteAt.delete(file);
    unchangedFiles.remember(file, r.stat);
    const digest = createHash('sha256').update(r.bytes).digest('hex');
    if (lastDigest.get(file) === digest) return;
    lastDigest.set(file, digest);
    const loaded = await decoder.load(file, r.bytes, opts.nodeName, now());
    if (stopped) return;
    if ('error' in loaded) {
      // The file's last good pod (if any) stays: a broken edit is not a deletion.
      reportError(loaded.error);
      return;
    }
    for (const w of loaded.warnings) {
      log.warn('Static pod manifest warning', { file, warning: w });
      events.warning({ file, message: w });
    }
    desired.putFile(loaded.pod);
    loadedFiles.add(file);
    flush();
  };

  /** Runs processName for `file`, never twice at once; a request while running runs it once more after. */
  const runName = (file: string): Promise<void> => {
    let st = names.get(file);
    if (!st) {
      st = { again: false };
      names.set(file, st);
    }
    const state = st;
    if (state.running) {
      state.again = true;
      return state.running;
    }
    state.running = (async () => {
      try {
        do {
          state.again = false;
          if (stopped) return;
          await processName(file);
        } while (state.again);
      } catch (err) {
        log.error('Could not process manifest file', { file, err: (err as Error).message });
      } finally {
        state.running = undefined;
        if (!state.timer) names.delete(file);
      }
    })();
    return state.running;
  };

  const schedule = (file: string, delayMs: number): void => {
    if (stopped) return;
    let st = names.get(file);
    if (!st) {
      st = { again: false };
      names.set(file, st);
    }
    const state = st;
    if (state.timer) clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      void runName(file);
    }, delayMs);
  };

  /**
   * The watched directory itself may have gone (removed, renamed away); the watcher then falls silent,
   * so a rescan takes over and waits for the path to come back.
   */
  let rootCheck: NodeJS.Timeout | undefined;
  const checkRootSoon = (): void => {
    if (stopped || rootCheck) return;
    rootCheck = setTimeout(() => {
      rootCheck = undefined;
      stat(watchedDir ?? root).catch(() => void rescan());
    }, debounceMs);
  };

  const onWatchEvent = (p: string): void => {
    const file = resolve(p);
    if (file === watchedDir) return checkRootSoon();
    if (singleFile !== undefined && file !== singleFile) return;
    if (dirname(file) !== watchedDir) return;
    schedule(file, debounceMs);
  };

  const startWatcher = async (dir: string): Promise<void> => {
    const ino = (await stat(dir)).ino;
    if (watcher && watchedDir === dir && watchedIno === ino) return;
    await stopWatcher();
    watchedDir = dir;
    watchedIno = ino;
    const w = watch(dir, {
      depth: 0,
      ignoreInitial: true,
      followSymlinks: true,
      // Only the directory's own entries are judged by name; the directory itself never is.
      ignored: (p: string) => {
        const abs = resolve(p);
        if (abs === dir || dirname(abs) !== dir) return false;
        if (singleFile !== undefined) return abs !== singleFile;
        const reason = ignoredNameReason(abs);
        if (reason !== undefined && skippedOnce.first(abs)) log.v(2).info('Skipping file in manifest directory', { file: abs, reason });
        return reason !== undefined;
      },
    });
    w.on('raw', (event: string, rawPath: string) => {
      if (event !== 'change' || !rawPath) return;
      const file = join(dir, basename(rawPath));
      if (ignoredNameReason(file) !== undefined) return;
      // Bounded like every per-name record: a burst of writes to many names must not grow the agent.
      if (lastWriteAt.size >= MAX_TRACKED_WRITES && !lastWriteAt.has(file)) lastWriteAt.delete(lastWriteAt.keys().next().value as string);
      lastWriteAt.set(file, Date.now());
    });
    w.on('add', onWatchEvent).on('change', onWatchEvent).on('unlink', onWatchEvent);
    w.on('addDir', onWatchEvent).on('unlinkDir', onWatchEvent);
    w.on('error', (err: unknown) => log.warn('Manifest directory watch error; periodic rescan continues', { err: String(err) }));
    watcher = w;
  };

  const stopWatcher = async (): Promise<void> => {
    const w = watcher;
    watcher = undefined;
    watchedDir = undefined;
    if (w) await w.close();
  };

  /** Finds every name in the path, processes each, and drops files that are gone. */
  const scanOnce = async (): Promise<void> => {
    batchDepth++;
    try {
      await scanPath();
    } finally {
      batchDepth--;
      flush();
    }
  };

  const scanPath = async (): Promise<void> => {
    let st;
    try {
      st = await stat(root);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!pathMissingLogged) {
        pathMissingLogged = true;
        if (code === 'ENOENT' || code === 'ENOTDIR') log.warn('Manifest path does not exist; waiting for it to appear', { path: root });
        else log.error('Cannot stat manifest path; retrying', { path: root, err: (err as Error).message });
      }
      await stopWatcher();
      // The path is gone: so are the files in it, as in the kubelet (an empty snapshot).
      await Promise.all(desired.files().map((f) => runName(f)));
      armMissingRetry();
      return;
    }
    if (pathMissingLogged) log.info('Manifest path appeared', { path: root });
    pathMissingLogged = false;
    let listed: string[];
    if (st.isDirectory()) {
      singleFile = undefined;
      await startWatcher(root);
      listed = [];
      for (const raw of await readdir(root, { encoding: 'buffer' })) {
        // Node can only name files whose names are valid UTF-8; say so instead of skipping in silence.
        if (isUtf8Name(raw)) listed.push(join(root, raw.toString('utf8')));
        else if (badNames.first(raw.toString('hex'))) log.error('Skipping manifest file whose name is not valid UTF-8; rename it', { dir: root, name: printableName(raw) });
      }
    } else {
      // A single manifest file: watch its directory, so a rename-over the file is seen too.
      singleFile = root;
      await startWatcher(dirname(root));
      listed = [root];
    }
    const all = new Set([...listed, ...desired.files()]);
    await Promise.all([...all].map((f) => runName(f)));
  };

  const armMissingRetry = (): void => {
    if (stopped || missingTimer) return;
    missingTimer = setTimeout(() => {
      missingTimer = undefined;
      void rescan();
    }, missingRetryMs);
  };

  const rescan = async (): Promise<void> => {
    while (scanning) await scanning;
    if (stopped) return;
    scanning = (async () => {
      try {
        await scanOnce();
        log.v(4).info('Manifest path rescanned', { path: root, files: desired.files().length });
      } catch (err) {
        log.error('Manifest path scan failed; retrying at the next rescan', { path: root, err: (err as Error).message });
      } finally {
        scanning = undefined;
      }
      if (!readySent && !stopped) {
        readySent = true;
        events.ready();
      }
    })();
    await scanning;
  };

  const periodic = (): void => {
    rescanTimer = setTimeout(() => {
      void rescan().finally(() => {
        if (!stopped) periodic();
      });
    }, checkEvery);
  };

  void rescan();
  periodic();

  return {
    rescan,
    async stop() {
      stopped = true;
      if (rescanTimer) clearTimeout(rescanTimer);
      if (missingTimer) clearTimeout(missingTimer);
      if (rootCheck) clearTimeout(rootCheck);
      for (const st of names.values()) if (st.timer) clearTimeout(st.timer);
      await stopWatcher();
      await decoder.close();
      await Promise.all([scanning, ...[...names.values()].map((s) => s.running)]);
    },
  };
}

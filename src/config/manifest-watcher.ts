// Watches the manifest directory (chokidar, inotify underneath) and only says "look at this name
// again": what counts is always what is on disk when the file is read. It also keeps the time of
// the last in-place write to each file, which tells the reader that a file may be half-written.
// In single-file mode it watches the file's directory, so that a rename over the file is seen too.
import { basename, dirname, join, resolve } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { Logger } from '../log/logger';
import { ignoredNameReason } from './ignore';

/** Names whose last write time is kept (for the quiet-file check); far above any real directory. */
const MAX_TRACKED_WRITES = 4096;
/** A watch that never says it is in place must not hold up the scan that started it. */
const READY_TIMEOUT_MS = 5_000;

export interface ManifestWatcherOptions {
  readonly log: Logger;
  /** A name in the watched directory may have changed. */
  onName(file: string): void;
  /** The watched directory itself changed (removed, renamed away): the watch may be dead. */
  onDirectory(): void;
  /** A name that is not a manifest was seen (the caller logs it once). */
  onIgnored(file: string, reason: string): void;
}

export class ManifestWatcher {
  private fsw: FSWatcher | undefined;
  private watchedDir: string | undefined;
  /** Inode of the watched directory: a directory replaced between two scans needs a new watch. */
  private watchedIno: number | undefined;
  /** In single-file mode, the only name that matters. */
  private only: string | undefined;
  /** Last in-place write event per file (raw inotify "change"): such a file may be half-written. */
  private readonly writes = new Map<string, number>();
  /** Ends the wait for the watch being in place (a watch closed meanwhile never says so). */
  private endReadyWait: (() => void) | undefined;
  private closed = false;

  constructor(private readonly opts: ManifestWatcherOptions) {}

  /** The directory being watched, if any. */
  get dir(): string | undefined {
    return this.watchedDir;
  }

  get watching(): boolean {
    return this.fsw !== undefined;
  }

  /**
   * Watches `dir`, whose inode the caller has just read (only the name `only` in it, when given),
   * unless that very directory is watched already. Resolves once the watch is in place, so that a
   * listing taken afterwards and the events together miss nothing.
   */
  async watch(dir: string, ino: number, only?: string): Promise<void> {
    this.only = only;
    if (this.closed || (this.fsw && this.watchedDir === dir && this.watchedIno === ino)) return;
    await this.stop();
    if (this.closed) return;
    this.watchedDir = dir;
    this.watchedIno = ino;
    const log = this.opts.log;
    const w = watch(dir, {
      depth: 0,
      ignoreInitial: true,
      followSymlinks: true,
      // Only the directory's own entries are judged by name; the directory itself never is.
      ignored: (p: string) => {
        const abs = resolve(p);
        if (abs === dir || dirname(abs) !== dir) return false;
        if (this.only !== undefined) return abs !== this.only;
        const reason = ignoredNameReason(abs);
        if (reason !== undefined) this.opts.onIgnored(abs, reason);
        return reason !== undefined;
      },
    });
    // Raw inotify events, one per change, say which names to look at: chokidar drops a "change"
    // of a name within 50 ms of the one before (its throttle has no trailing edge), which would
    // lose the last of two quick saves until the next rescan. Its own events below still tell
    // about the directory itself; for names they are duplicates, which the queue's quiet time folds.
    w.on('raw', (event: string, rawPath: string) => {
      if (!rawPath) return;
      const file = join(dir, basename(rawPath));
      if (ignoredNameReason(file) !== undefined) return;
      if (event === 'rename') {
        // The name was linked, moved or removed: it names another file now (or none), and what was
        // written to the one before does not matter. This keeps a rename over an existing manifest
        // fast: unlinking the old file shows as a "change" on its own watch, just before.
        this.writes.delete(file);
      } else if (event === 'change') {
        // Bounded like every per-name record: a burst of writes to many names must not grow the agent.
        if (this.writes.size >= MAX_TRACKED_WRITES && !this.writes.has(file)) this.writes.delete(this.writes.keys().next().value as string);
        this.writes.set(file, Date.now());
      }
      this.onEvent(file);
    });
    const onEvent = (p: string): void => this.onEvent(resolve(p));
    w.on('add', onEvent).on('change', onEvent).on('unlink', onEvent);
    w.on('addDir', onEvent).on('unlinkDir', onEvent);
    w.on('error', (err: unknown) => log.warn('Manifest directory watch error; periodic rescan continues', { err: String(err) }));
    this.fsw = w;
    await new Promise<void>((done) => {
      const end = (): void => {
        clearTimeout(timer);
        if (this.endReadyWait === end) this.endReadyWait = undefined;
        done();
      };
      const timer = setTimeout(end, READY_TIMEOUT_MS);
      this.endReadyWait = end;
      w.once('ready', end);
      w.once('error', end);
    });
  }

  /** For good: a scan still under way starts no new watch. */
  close(): Promise<void> {
    this.closed = true;
    return this.stop();
  }

  /** Until the next `watch` (the path went away). */
  async stop(): Promise<void> {
    this.endReadyWait?.();
    const w = this.fsw;
    this.fsw = undefined;
    this.watchedDir = undefined;
    if (w) await w.close();
  }

  /** When the last in-place write to `file` was seen, if one was. */
  lastWriteAt(file: string): number | undefined {
    return this.writes.get(file);
  }

  /** A read of `file` that began at `readStartMs` saw the whole file: earlier writes are answered. */
  readFrom(file: string, readStartMs: number): void {
    const last = this.writes.get(file);
    if (last !== undefined && last < readStartMs) this.writes.delete(file);
  }

  forget(file: string): void {
    this.writes.delete(file);
  }

  private onEvent(file: string): void {
    if (file === this.watchedDir) return this.opts.onDirectory();
    if (this.only !== undefined && file !== this.only) return;
    if (dirname(file) !== this.watchedDir) return;
    this.opts.onName(file);
  }
}

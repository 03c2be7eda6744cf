// Watches the manifest directory (one inotify watch on the directory, through fs.watch) and only
// says "look at this name again": what counts is always what is on disk when the file is read. It
// also keeps the time of the last in-place write to each file, which tells the reader that a file
// may be half-written. In single-file mode it watches the file's directory, so that a rename over
// the file is seen too.
//
// Why not chokidar (used before): it put one more watch on every file, stat-ed every name it heard
// of (a removed file's stat fails, and is handled as an error), normalised each path several times
// and handed each event to every listener of its directory. In a flood of 2,000 files that was the
// largest single piece of the agent's work, and the event loop was busy for seconds. The directory's
// own watch already names each entry created, written, renamed or removed in it; a change to a
// symlink's target is left to the periodic scan, as the kubelet leaves it to its 20 s relist.
import { watch as watchPath, type FSWatcher } from 'node:fs';
import { basename } from 'node:path';
import type { Logger } from '../log/logger';
import { errorMessage } from '../util/error-message';
import { ignoredEntryReason } from './ignore';

/** Names whose last write time is kept (for the quiet-file check); far above any real directory. */
const MAX_TRACKED_WRITES = 4096;

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
  /** The watched directory's own name, under which the kernel tells its removal. */
  private watchedName: string | undefined;
  /** Inode of the watched directory: a directory replaced between two scans needs a new watch. */
  private watchedIno: number | undefined;
  /** In single-file mode, the only name that matters. */
  private only: string | undefined;
  /** Last in-place write event per file (raw inotify "change"): such a file may be half-written. */
  private readonly writes = new Map<string, number>();
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
    let w: FSWatcher;
    try {
      // In place once this returns: a listing taken afterwards and the events miss nothing.
      w = watchPath(dir, { persistent: true }, (event, name) => this.onRaw(dir, event, name));
    } catch (err) {
      // Gone again since the caller's stat, or out of inotify watches: the periodic scan carries on.
      this.opts.log.warn('Cannot watch manifest directory; periodic rescan continues', {
        path: dir,
        err: errorMessage(err),
      });
      this.opts.onDirectory();
      return;
    }
    w.on('error', (err: unknown) => {
      this.opts.log.warn('Manifest directory watch error; periodic rescan continues', {
        path: dir,
        err: errorMessage(err),
      });
      // A dead watch is dropped, so that the next scan makes a new one.
      if (this.fsw === w) void this.stop();
      this.opts.onDirectory();
    });
    this.fsw = w;
    this.watchedDir = dir;
    this.watchedName = basename(dir);
    this.watchedIno = ino;
  }

  /** One inotify event of the directory: `name` is the entry it is about. */
  private onRaw(dir: string, event: string, name: string | null): void {
    if (this.fsw === undefined || this.watchedDir !== dir) return;
    // No name: the kernel dropped events (queue overflow) or the event is the directory's own.
    if (!name) return this.opts.onDirectory();
    // The directory's own removal or rename is told under its own name: the watch may be dead.
    if (event === 'rename' && name === this.watchedName) this.opts.onDirectory();
    // The kernel names an entry of the directory, never a path: no need to normalise one per event
    // (nor to take its base name again: a flood hears ~5 events per file, each path.basename a few µs).
    if (name.includes('/')) return;
    const file = dir.endsWith('/') ? dir + name : `${dir}/${name}`;
    if (this.only !== undefined && file !== this.only) return;
    const reason = ignoredEntryReason(name);
    if (reason !== undefined) return this.opts.onIgnored(file, reason);
    if (event === 'rename') {
      // The name was linked, moved or removed: it names another file now (or none), and what was
      // written to the one before does not matter. This keeps a rename over an existing manifest fast.
      this.writes.delete(file);
    } else if (event === 'change') {
      // Bounded like every per-name record: a burst of writes to many names must not grow the agent.
      if (this.writes.size >= MAX_TRACKED_WRITES && !this.writes.has(file))
        this.writes.delete(this.writes.keys().next().value as string);
      this.writes.set(file, Date.now());
    }
    this.opts.onName(file);
  }

  /** For good: a scan still under way starts no new watch. */
  close(): Promise<void> {
    this.closed = true;
    return this.stop();
  }

  /** Until the next `watch` (the path went away). */
  async stop(): Promise<void> {
    const w = this.fsw;
    this.fsw = undefined;
    this.watchedDir = undefined;
    this.watchedName = undefined;
    w?.close();
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
}

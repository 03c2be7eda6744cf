// Full scans of the manifest path: at start, every fileCheckFrequency (a safety net for whatever
// the watcher missed: inotify overflow, a symlink's target changing, the directory replaced), and
// whenever the path itself may have gone. A scan lists the path and hands every name to `pass`;
// scans never overlap. A missing path is looked for again every missingPathRetryMs; until then it
// counts as empty, as in the kubelet.
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from '../log/logger';
import { errorMessage } from '../util/error-message';
import { KeyedSerialRunner } from '../util/serial-runner';
import { isUtf8Name, OnceSet, printableName } from './ignore';
import type { ManifestWatcher } from './manifest-watcher';

export interface ManifestScannerOptions {
  /** The manifest path, absolute: a directory, or a single manifest file. */
  readonly root: string;
  readonly log: Logger;
  /** Watched from before each listing on, so that the listing and the events together miss nothing. */
  readonly watcher: ManifestWatcher;
  readonly periodMs: number;
  readonly missingRetryMs: number;
  /** Pause before checking that the watched directory is still there. */
  readonly checkDelayMs: number;
  /** Brings everything in line with the names the path holds now (none when it is missing). */
  pass(names: string[]): Promise<void>;
  /** After the first scan, whether or not it worked. */
  onFirstScan(): void;
}

export class ManifestScanner {
  private readonly scans: KeyedSerialRunner<'scan'>;
  private readonly badNames = new OnceSet();
  private pathMissingLogged = false;
  private scanned = false;
  private stopped = false;
  private periodTimer: NodeJS.Timeout | undefined;
  private missingTimer: NodeJS.Timeout | undefined;
  private checkTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ManifestScannerOptions) {
    this.scans = new KeyedSerialRunner(() => this.scan());
  }

  /** The first scan now, then one every period. */
  start(): void {
    void this.rescan();
    this.armPeriodic();
  }

  /** A full scan that starts after this call; resolves when it is done. Never rejects. */
  async rescan(): Promise<void> {
    if (this.stopped) return;
    await this.scans.run('scan');
  }

  /**
   * The watched directory itself may have gone (removed, renamed away); the watcher then falls
   * silent, so a scan takes over and waits for the path to come back.
   */
  checkPathSoon(): void {
    if (this.stopped || this.checkTimer) return;
    this.checkTimer = setTimeout(() => {
      this.checkTimer = undefined;
      stat(this.opts.watcher.dir ?? this.opts.root).catch(() => void this.rescan());
    }, this.opts.checkDelayMs);
  }

  /** No scan starts from now on; resolves when the one under way is done. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of [this.periodTimer, this.missingTimer, this.checkTimer]) if (t) clearTimeout(t);
    await this.scans.idle();
  }

  private async scan(): Promise<void> {
    if (this.stopped) return;
    try {
      await this.opts.pass(await this.list());
    } catch (err) {
      this.opts.log.error('Manifest path scan failed; retrying at the next rescan', {
        path: this.opts.root,
        err: errorMessage(err),
      });
    }
    if (!this.scanned && !this.stopped) {
      this.scanned = true;
      // Its failure is not the scan's, and must not become an unhandled rejection.
      try {
        this.opts.onFirstScan();
      } catch (err) {
        this.opts.log.error('Static pod source ready handler failed', { path: this.opts.root, err: errorMessage(err) });
      }
    }
  }

  /** The names in the path, watched from before the listing on. */
  private async list(): Promise<string[]> {
    const { root, log, watcher } = this.opts;
    let st;
    try {
      st = await stat(root);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!this.pathMissingLogged) {
        this.pathMissingLogged = true;
        if (code === 'ENOENT' || code === 'ENOTDIR')
          log.warn('Manifest path does not exist; waiting for it to appear', { path: root });
        else log.error('Cannot stat manifest path; retrying', { path: root, err: errorMessage(err) });
      }
      await watcher.stop();
      this.armMissingRetry();
      // The path is gone: so are the files in it, as in the kubelet (an empty snapshot).
      return [];
    }
    if (this.pathMissingLogged) log.info('Manifest path appeared', { path: root });
    this.pathMissingLogged = false;
    if (!st.isDirectory()) {
      // A single manifest file: watch its directory, so a rename-over the file is seen too.
      await watcher.watch(dirname(root), (await stat(dirname(root))).ino, root);
      return [root];
    }
    await watcher.watch(root, st.ino);
    const names: string[] = [];
    for (const raw of await readdir(root, { encoding: 'buffer' })) {
      // Node can only name files whose names are valid UTF-8; say so instead of skipping in silence.
      if (isUtf8Name(raw)) names.push(join(root, raw.toString('utf8')));
      else if (this.badNames.first(raw.toString('hex')))
        log.error('Skipping manifest file whose name is not valid UTF-8; rename it', {
          dir: root,
          name: printableName(raw),
        });
    }
    return names;
  }

  private armMissingRetry(): void {
    if (this.stopped || this.missingTimer) return;
    this.missingTimer = setTimeout(() => {
      this.missingTimer = undefined;
      void this.rescan();
    }, this.opts.missingRetryMs);
  }

  private armPeriodic(): void {
    this.periodTimer = setTimeout(() => {
      void this.rescan().finally(() => {
        if (!this.stopped) this.armPeriodic();
      });
    }, this.opts.periodMs);
  }
}

// Reads one container log file line by line and, when following, keeps reading what the runtime
// appends, as the kubelet's ReadLogs does, and further:
// - rotation: the live file renamed away and a new one put at its path (a new inode: the old one is
//   read to its end first), or the file truncated in place (copytruncate: read again from the start);
// - restarts (`restarts`): a newer `<restartCount>.log` in the same directory is followed in turn;
// - the container stopping (`containerState`): what it wrote is read to the end, then the read ends.
// It wakes on inotify events of the container's log directory and at least every `forceCheckMs`
// (the kubelet's logForceCheckPeriod). Memory is bounded: one 64 KiB buffer and at most one unfinished
// line; a sink that is slow to take what it got pauses the reading (back-pressure).
import { constants, watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { containerLogFileName, newerRestart } from './layout.js';
import { tailStart } from './tail.js';

const CHUNK = 64 * 1024;
/**
 * Runtimes split lines at 16 KiB (partial lines), so a longer line is not a CRI line: it is cut
 * here, keeping its start and ending it, so that one such line never holds more memory than this.
 */
export const MAX_LOG_LINE = 1024 * 1024;
const FORCE_CHECK_MS = 1_000;
const NEWLINE = 0x0a;
const NEWLINE_BUF = Buffer.from('\n');

export type ContainerRunState = 'running' | 'stopped' | 'gone';

/** Where the lines go. */
export interface LogLineSink {
  /** One line as read: with its newline, except the unfinished end of a file that has no more coming. */
  line(raw: Buffer): void;
  /** True once no more lines are wanted (a limit reached): reading stops. */
  readonly done: boolean;
  /** After each read: hands on what the lines made; false when reading should stop (the reader left). */
  flush(): Promise<boolean>;
}

export interface FollowLogOptions {
  /** The log file's path, and the file already opened there (openLogFile), so that its errors come first. */
  readonly path: string;
  readonly file: FileHandle;
  readonly sink: LogLineSink;
  readonly signal: AbortSignal;
  readonly follow: boolean;
  /** Start at the last `tailLines` lines; undefined: from the start. */
  readonly tailLines?: number;
  /** For follow: whether the container still runs; once it does not, the read ends at the end of the file. */
  readonly containerState?: () => Promise<ContainerRunState>;
  /** For follow: `path` is `<restart>.log`; a newer restart's file is followed when it appears. */
  readonly restarts?: { readonly restart: number; onRestart(path: string, restart: number): void };
  readonly forceCheckMs?: number;
}

/** Opens a log without following a symlink in its last component. Throws with the OS reason. */
export function openLogFile(path: string): Promise<FileHandle> {
  return open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
}

/** Splits what is read into lines; holds the unfinished end between reads. */
class LineSplitter {
  private carry: Buffer | undefined;
  /** Inside a line that was cut at MAX_LOG_LINE: its rest is skipped up to its newline. */
  private skipping = false;

  constructor(private readonly sink: LogLineSink) {}

  push(chunk: Buffer): void {
    const data = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = undefined;
    let start = 0;
    for (let nl = data.indexOf(NEWLINE); nl >= 0 && !this.sink.done; nl = data.indexOf(NEWLINE, start)) {
      if (this.skipping) this.skipping = false;
      else this.sink.line(data.subarray(start, nl + 1));
      start = nl + 1;
    }
    if (this.sink.done || this.skipping) return;
    const rest = data.subarray(start);
    if (rest.length > MAX_LOG_LINE) {
      this.sink.line(Buffer.concat([rest.subarray(0, MAX_LOG_LINE), NEWLINE_BUF]));
      this.skipping = true;
      return;
    }
    // Copied: the read buffer is reused by the next read.
    if (rest.length > 0) this.carry = Buffer.from(rest);
  }

  /** The file has no more coming: an unfinished last line is still a line (the kubelet parses it too). */
  end(): void {
    if (this.carry && !this.sink.done) this.sink.line(this.carry);
    this.reset();
  }

  reset(): void {
    this.carry = undefined;
    this.skipping = false;
  }
}

/** Resolves when the file (and, following, the container) is done, the sink stopped, or the signal fired. */
export async function followContainerLog(o: FollowLogOptions): Promise<void> {
  const sink = o.sink;
  const forceCheckMs = o.forceCheckMs ?? FORCE_CHECK_MS;
  const lines = new LineSplitter(sink);
  const buf = Buffer.allocUnsafe(CHUNK);
  let path = o.path;
  let file = o.file;
  let restart = o.restarts?.restart;
  let watcher: FSWatcher | undefined;
  let wake: (() => void) | undefined;
  let changed = false;
  let lastStateCheck = 0;
  let draining = false;
  let pos = 0;

  const stopped = (): boolean => sink.done || o.signal.aborted;
  /** Reads to the current end of the file, handing on each chunk; false when reading should stop. */
  const readAvailable = async (): Promise<boolean> => {
    for (;;) {
      if (stopped()) return false;
      const { bytesRead } = await file.read(buf, 0, CHUNK, pos);
      if (bytesRead === 0) return true;
      pos += bytesRead;
      lines.push(buf.subarray(0, bytesRead));
      if (!(await sink.flush())) return false;
    }
  };
  /** The old file read to its end, then the new one from its start. */
  const switchTo = async (next: FileHandle, nextPath: string): Promise<boolean> => {
    let more = await readAvailable();
    if (more) {
      lines.end();
      more = await sink.flush();
    }
    await file.close();
    file = next;
    path = nextPath;
    pos = 0;
    lines.reset();
    return more;
  };

  try {
    if (o.tailLines !== undefined) pos = await tailStart(file, (await file.stat()).size, o.tailLines);
    for (;;) {
      if (!(await readAvailable())) break;
      if (!o.follow || draining) {
        lines.end();
        break;
      }
      const held = await file.stat();
      if (held.size < pos) {
        // Truncated in place: what is there now was written after the truncation.
        pos = 0;
        lines.reset();
        continue;
      }
      const newer = o.restarts && restart !== undefined ? await newerRestart(dirname(path), restart) : undefined;
      if (newer !== undefined) {
        const nextPath = join(dirname(path), containerLogFileName(newer));
        const next = await openLogFile(nextPath).catch(() => undefined);
        if (next) {
          if (!(await switchTo(next, nextPath))) break;
          restart = newer;
          o.restarts?.onRestart(nextPath, newer);
          continue;
        }
      }
      const rotated = await reopenIfReplaced(path, held);
      if (rotated) {
        if (!(await switchTo(rotated, path))) break;
        continue;
      }
      const now = Date.now();
      if (o.containerState && now - lastStateCheck >= forceCheckMs) {
        lastStateCheck = now;
        if ((await o.containerState().catch(() => 'running' as const)) !== 'running') {
          // Whatever it wrote before it stopped is still read.
          draining = true;
          continue;
        }
      }
      watcher ??= watchDirectory(path, () => {
        changed = true;
        wake?.();
      });
      if (!changed) await sleep(forceCheckMs, o.signal, (w) => (wake = w));
      wake = undefined;
      changed = false;
      if (o.signal.aborted) {
        lines.end();
        break;
      }
    }
    await sink.flush();
  } finally {
    watcher?.close();
    await file.close().catch(() => undefined);
  }
}

/** Waits `ms`, or until woken or aborted. */
function sleep(ms: number, signal: AbortSignal, setWake: (wake: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    setWake(done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** The file now at `path` when it is not the one held (a rotation); undefined when it is, or none is there yet. */
async function reopenIfReplaced(path: string, held: { ino: number; dev: number }): Promise<FileHandle | undefined> {
  const now = await stat(path).catch(() => undefined);
  if (!now || (now.ino === held.ino && now.dev === held.dev)) return undefined;
  return openLogFile(path).catch(() => undefined);
}

/** inotify on the container's log directory: writes, the rename of a rotation, a new file. */
function watchDirectory(path: string, onEvent: () => void): FSWatcher | undefined {
  try {
    const w = watch(dirname(path), { persistent: false }, onEvent);
    w.on('error', () => w.close());
    return w;
  } catch {
    return undefined;
  }
}

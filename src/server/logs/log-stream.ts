// Streams one container's CRI log file to a client as the kubelet's ReadLogs does: from the start or
// the last `tailLines` lines, content only (with the fixed-width time first when `timestamps`),
// lines before `since` skipped, cut at `limitBytes`. With `follow` it waits at the end of the file
// for more, switches to the new file when the live one is rotated (renamed and reopened), and ends
// once the container has stopped or is gone and everything written is sent. Memory is bounded: one
// 64 KiB read buffer and at most one unfinished line per client; a slow client pauses the reading
// (back-pressure), it never makes it buffer.
import { watch, type FSWatcher } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { constants } from 'node:fs';
import type { Writable } from 'node:stream';
import { fixedLogTime, parseCriLogLine, parseLogTime } from './cri-log-line.js';
import type { LogOptions } from './log-options.js';
import { tailStart } from './tail.js';

const CHUNK = 64 * 1024;
/** A line longer than this is not a CRI line (runtimes split lines at 16 KiB): it is dropped. */
const MAX_LINE = 1024 * 1024;
/** How often a follower looks at the file and the container without being woken (logForceCheckPeriod). */
const FORCE_CHECK_MS = 1_000;
const NEWLINE = 0x0a;

export type ContainerRunState = 'running' | 'stopped' | 'gone';

export interface LogStreamOptions {
  options: LogOptions;
  out: Writable;
  /** Aborted when the client went away or the server stops. */
  signal: AbortSignal;
  /** For follow: whether the container still runs (a CRI ContainerStatus). */
  containerState?: () => Promise<ContainerRunState>;
  /** A line that is not CRI format (skipped, as the kubelet does). */
  onBadLine?: (line: Buffer) => void;
}

/** Opens the log without following a symlink in its last component. Throws with the OS reason. */
export function openLogFile(path: string): Promise<FileHandle> {
  return open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
}

/** What the client is sent, line by line, within limitBytes and the tail count. */
class LogWriter {
  private remaining: number;
  private linesLeft: number;
  private pieces: Buffer[] = [];
  done = false;

  constructor(private readonly o: LogOptions) {
    this.remaining = o.limitBytes ?? Number.POSITIVE_INFINITY;
    // Only a tail without follow stops after a count of lines (limitedMode).
    this.linesLeft = o.tailLines !== undefined && !o.follow ? o.tailLines : Number.POSITIVE_INFINITY;
    if (this.linesLeft === 0) this.done = true;
  }

  line(raw: Buffer, onBad?: (l: Buffer) => void): void {
    if (this.done) return;
    const msg = parseCriLogLine(raw);
    if (!msg) {
      onBad?.(raw);
      return;
    }
    if (this.o.sinceNs !== undefined && (parseLogTime(msg.time) ?? -1n) < this.o.sinceNs) {
      this.countLine();
      return;
    }
    if (this.o.timestamps) this.emit(Buffer.from(`${fixedLogTime(msg.time)} `, 'latin1'));
    this.emit(msg.content);
    this.countLine();
  }

  private countLine(): void {
    if (--this.linesLeft <= 0) this.done = true;
  }

  private emit(b: Buffer): void {
    if (this.done || b.length === 0) return;
    if (b.length >= this.remaining) {
      this.pieces.push(b.subarray(0, this.remaining));
      this.remaining = 0;
      this.done = true;
      return;
    }
    this.remaining -= b.length;
    this.pieces.push(b);
  }

  take(): Buffer | undefined {
    if (this.pieces.length === 0) return undefined;
    const out = this.pieces.length === 1 ? Buffer.from(this.pieces[0]!) : Buffer.concat(this.pieces);
    this.pieces = [];
    return out;
  }
}

function waitDrain(out: Writable, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      out.off('drain', done);
      out.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    out.once('drain', done);
    out.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Streams from `file` (already opened at `path`); resolves when done, the client left, or the limit was hit. */
export async function streamContainerLog(path: string, first: FileHandle, o: LogStreamOptions): Promise<void> {
  const opts = o.options;
  const writer = new LogWriter(opts);
  let file = first;
  let watcher: FSWatcher | undefined;
  let wake: (() => void) | undefined;
  let changed = false;
  let lastStateCheck = 0;
  let draining = false;
  const buf = Buffer.allocUnsafe(CHUNK);
  let carry: Buffer | undefined;

  const send = async (): Promise<boolean> => {
    const chunk = writer.take();
    if (chunk && !o.out.destroyed && !o.out.write(chunk)) await waitDrain(o.out, o.signal);
    return !o.signal.aborted && !o.out.destroyed;
  };
  const lines = (data: Buffer): void => {
    let start = 0;
    for (let nl = data.indexOf(NEWLINE); nl >= 0 && !writer.done; nl = data.indexOf(NEWLINE, start)) {
      writer.line(data.subarray(start, nl + 1), o.onBadLine);
      start = nl + 1;
    }
    const rest = data.subarray(start);
    // The unfinished line is copied: `buf` is reused by the next read.
    carry = rest.length === 0 || rest.length > MAX_LINE ? undefined : Buffer.from(rest);
  };

  try {
    const size = (await file.stat()).size;
    let pos = opts.tailLines !== undefined ? await tailStart(file, size, opts.tailLines) : 0;
    while (!writer.done && !o.signal.aborted) {
      const { bytesRead } = await file.read(buf, 0, CHUNK, pos);
      if (bytesRead > 0) {
        pos += bytesRead;
        const data = carry ? Buffer.concat([carry, buf.subarray(0, bytesRead)]) : buf.subarray(0, bytesRead);
        carry = undefined;
        lines(data);
        if (!(await send())) return;
        continue;
      }
      if (!opts.follow || draining) {
        // An unfinished last line is still a line (the kubelet parses it too).
        if (carry) writer.line(carry, o.onBadLine);
        await send();
        return;
      }
      // Follow: has the live file been rotated? Then the old one is read to its end: switch.
      const next = await reopenIfRotated(path, file);
      if (next) {
        await file.close();
        file = next;
        pos = 0;
        carry = undefined;
        continue;
      }
      const now = Date.now();
      if (o.containerState && now - lastStateCheck >= FORCE_CHECK_MS) {
        lastStateCheck = now;
        if ((await o.containerState().catch(() => 'running' as const)) !== 'running') {
          // Whatever it wrote before it stopped is still sent.
          draining = true;
          continue;
        }
      }
      watcher ??= watchDirectory(path, () => {
        changed = true;
        wake?.();
      });
      if (!changed) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, FORCE_CHECK_MS);
          function done(): void {
            clearTimeout(timer);
            o.signal.removeEventListener('abort', done);
            wake = undefined;
            resolve();
          }
          wake = done;
          o.signal.addEventListener('abort', done, { once: true });
        });
      }
      changed = false;
    }
    await send();
  } finally {
    watcher?.close();
    await file.close().catch(() => undefined);
  }
}

/** The file now at `path` when it is not the one we hold (rotated); undefined when it is, or none is there yet. */
async function reopenIfRotated(path: string, current: FileHandle): Promise<FileHandle | undefined> {
  let now;
  try {
    now = await stat(path);
  } catch {
    return undefined;
  }
  const held = await current.stat();
  if (now.ino === held.ino && now.dev === held.dev) return undefined;
  try {
    return await openLogFile(path);
  } catch {
    return undefined;
  }
}

/** inotify on the container's log directory: writes, the rename of a rotation, the new file. */
function watchDirectory(path: string, onEvent: () => void): FSWatcher | undefined {
  try {
    const w = watch(dirname(path), { persistent: false }, onEvent);
    w.on('error', () => w.close());
    return w;
  } catch {
    return undefined;
  }
}

// Streams one container's CRI log file to a client as the kubelet's ReadLogs does: from the start or
// the last `tailLines` lines, content only (with the fixed-width time first when `timestamps`),
// lines before `since` skipped, cut at `limitBytes`. Reading, following across rotations and ending
// once the container has stopped or is gone are the node's follower (src/node/pod-logs/follow.ts);
// this is what the client is sent. A slow client pauses the reading (back-pressure), it never makes
// it buffer.
import type { FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { fixedLogTime, parseCriLogLine, parseLogTime } from '../../node/pod-logs/cri-log-line.js';
import { followContainerLog, type ContainerRunState, type LogLineSink } from '../../node/pod-logs/follow.js';
import type { LogOptions } from './log-options.js';

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

/** What the client is sent, line by line, within limitBytes and the tail count. */
class LogWriter implements LogLineSink {
  private remaining: number;
  private linesLeft: number;
  private pieces: Buffer[] = [];
  done = false;

  constructor(
    private readonly o: LogOptions,
    private readonly out: Writable,
    private readonly signal: AbortSignal,
    private readonly onBad?: (l: Buffer) => void,
  ) {
    this.remaining = o.limitBytes ?? Number.POSITIVE_INFINITY;
    // Only a tail without follow stops after a count of lines (limitedMode).
    this.linesLeft = o.tailLines !== undefined && !o.follow ? o.tailLines : Number.POSITIVE_INFINITY;
    if (this.linesLeft === 0) this.done = true;
  }

  line(raw: Buffer): void {
    if (this.done) return;
    const msg = parseCriLogLine(raw);
    if (!msg) {
      this.onBad?.(raw);
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

  async flush(): Promise<boolean> {
    if (this.pieces.length > 0) {
      // Copied: the pieces are views into the follower's read buffer.
      const chunk = this.pieces.length === 1 ? Buffer.from(this.pieces[0]!) : Buffer.concat(this.pieces);
      this.pieces = [];
      if (!this.out.destroyed && !this.out.write(chunk)) await waitDrain(this.out, this.signal);
    }
    return !this.signal.aborted && !this.out.destroyed;
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

/** Streams from `first` (already opened at `path`); resolves when done, the client left, or the limit was hit. */
export async function streamContainerLog(path: string, first: FileHandle, o: LogStreamOptions): Promise<void> {
  const opts = o.options;
  await followContainerLog({
    path,
    file: first,
    sink: new LogWriter(opts, o.out, o.signal, o.onBadLine),
    signal: o.signal,
    follow: opts.follow,
    tailLines: opts.tailLines,
    containerState: o.containerState,
  });
}

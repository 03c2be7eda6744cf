// Prints a container log file as `kubectl logs` does, and with follow keeps printing what the
// runtime appends, across rotations and restarts of the container (the node's follower,
// src/node/pod-logs/follow.ts). A line that is not in the CRI format is shown as it is.
import { StringDecoder } from 'node:string_decoder';
import { fixedLogTime, parseCriLogLine } from '../node/pod-logs/cri-log-line.js';
import { followContainerLog, openLogFile, type LogLineSink } from '../node/pod-logs/follow.js';

const NEWLINE = 0x0a;
const NEWLINE_BUF = Buffer.from('\n');

export interface StreamOptions {
  readonly file: string;
  readonly restart: number;
  readonly follow: boolean;
  readonly timestamps: boolean;
  write(s: string): void;
  /** Said on stderr: a restart followed. */
  notice(s: string): void;
  readonly signal?: AbortSignal;
  readonly pollMs?: number;
}

/** kubectl's rendering: the content (partial lines joined), the fixed-width time first with --timestamps. */
class TerminalSink implements LogLineSink {
  readonly done = false;
  private pieces: Buffer[] = [];
  // One decoder for all content: a runtime splits long lines at a byte count, maybe inside a character.
  private readonly text = new StringDecoder('utf8');

  constructor(
    private readonly timestamps: boolean,
    private readonly write: (s: string) => void,
  ) {}

  line(raw: Buffer): void {
    const l = parseCriLogLine(raw);
    if (!l) {
      this.pieces.push(raw[raw.length - 1] === NEWLINE ? raw : Buffer.concat([raw, NEWLINE_BUF]));
      return;
    }
    if (this.timestamps) this.pieces.push(Buffer.from(`${fixedLogTime(l.time)} `, 'latin1'));
    this.pieces.push(l.content);
  }

  /** Written once per read: the pieces are views into the follower's buffer, used before it is reused. */
  async flush(): Promise<boolean> {
    if (this.pieces.length > 0) {
      const s = this.text.write(Buffer.concat(this.pieces));
      this.pieces = [];
      if (s !== '') this.write(s);
    }
    return true;
  }

  end(): void {
    const rest = this.text.end();
    if (rest !== '') this.write(rest);
  }
}

export async function streamLog(o: StreamOptions): Promise<void> {
  const sink = new TerminalSink(o.timestamps, (s) => o.write(s));
  await followContainerLog({
    path: o.file,
    file: await openLogFile(o.file),
    sink,
    signal: o.signal ?? new AbortController().signal,
    follow: o.follow,
    restarts: {
      restart: o.restart,
      onRestart: (file) => o.notice(`--- the container restarted; following ${file} ---\n`),
    },
    forceCheckMs: o.pollMs ?? 250,
  });
  sink.end();
}

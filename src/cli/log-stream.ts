// Prints a container log file as `kubectl logs` does, and with follow keeps printing what the
// runtime appends, across rotations and restarts of the container (the node's follower,
// src/node/pod-logs/follow.ts). A line that is not in the CRI format is shown as it is.
import { StringDecoder } from 'node:string_decoder';
import { fixedLogTime, parseCriLogLine } from '../node/pod-logs/cri-log-line.js';
import { followContainerLog, openLogFile, type LogLineSink } from '../node/pod-logs/follow.js';

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
  // One decoder for all content: a runtime splits long lines at a byte count, maybe inside a character.
  private readonly text = new StringDecoder('utf8');

  constructor(
    private readonly timestamps: boolean,
    private readonly write: (s: string) => void,
  ) {}

  line(raw: Buffer): void {
    const l = parseCriLogLine(raw);
    if (!l) {
      const s = this.text.end() + raw.toString('utf8');
      this.write(s.endsWith('\n') ? s : `${s}\n`);
      return;
    }
    const s = this.text.write(l.content);
    this.write(this.timestamps ? `${fixedLogTime(l.time)} ${s}` : s);
  }

  async flush(): Promise<boolean> {
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
    restarts: { restart: o.restart, onRestart: (file) => o.notice(`--- the container restarted; following ${file} ---\n`) },
    forceCheckMs: o.pollMs ?? 250,
  });
  sink.end();
}

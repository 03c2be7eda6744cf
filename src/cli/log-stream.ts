// Prints a container log file as `kubectl logs` does, and with follow keeps printing what the
// runtime appends: across a rotation (the file renamed away, a new one in its place: the old one is
// read to its end first) and across a restart of the container (a newer <restart>.log appears).
import { open, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { renderCriLogLine } from '../node/cri-log-line.js';
import { newerRestart } from './pod-log-locator.js';

export interface StreamOptions {
  readonly file: string;
  readonly containerDir: string;
  readonly restart: number;
  readonly follow: boolean;
  readonly timestamps: boolean;
  write(s: string): void;
  /** Said on stderr: a restart followed. */
  notice(s: string): void;
  readonly signal?: AbortSignal;
  readonly pollMs?: number;
}

const CHUNK = 64 * 1024;
/** A runtime splits longer lines into partial ones (16 KiB); anything longer is shown in pieces. */
const MAX_CARRY = 1024 * 1024;

class LineReader {
  private carry = '';
  private position = 0;
  private readonly buf = Buffer.allocUnsafe(CHUNK);

  constructor(
    readonly fh: FileHandle,
    private readonly emit: (line: string) => void,
  ) {}

  /** Reads to the current end of the file; true when anything was read. */
  async drain(): Promise<boolean> {
    let any = false;
    for (;;) {
      const { bytesRead } = await this.fh.read(this.buf, 0, CHUNK, this.position);
      if (bytesRead === 0) return any;
      any = true;
      this.position += bytesRead;
      const parts = (this.carry + this.buf.toString('utf8', 0, bytesRead)).split('\n');
      this.carry = parts.pop() ?? '';
      for (const p of parts) this.emit(p);
      if (this.carry.length > MAX_CARRY) {
        this.emit(this.carry);
        this.carry = '';
      }
    }
  }

  /** A last line without its newline (the file ended there). */
  flush(): void {
    if (this.carry !== '') this.emit(this.carry);
    this.carry = '';
  }
}

export async function streamLog(o: StreamOptions): Promise<void> {
  const emit = (line: string): void => o.write(renderCriLogLine(line, o.timestamps));
  let file = o.file;
  let restart = o.restart;
  let reader = new LineReader(await open(file, 'r'), emit);
  try {
    await reader.drain();
    if (!o.follow) return reader.flush();
    const pollMs = o.pollMs ?? 250;
    while (!o.signal?.aborted) {
      await sleep(pollMs, undefined, { signal: o.signal }).catch(() => undefined);
      if (o.signal?.aborted) break;
      await reader.drain();
      const [now, current] = await Promise.all([stat(file).catch(() => undefined), reader.fh.stat()]);
      const newer = await newerRestart(o.containerDir, restart);
      if (newer !== undefined) {
        await reader.drain();
        reader.flush();
        await reader.fh.close();
        restart = newer;
        file = join(o.containerDir, `${newer}.log`);
        o.notice(`--- the container restarted; following ${file} ---\n`);
        reader = new LineReader(await open(file, 'r'), emit);
        continue;
      }
      if (now && now.ino !== current.ino) {
        // Rotated: what was appended before the rename is read from the old file first.
        await reader.drain();
        reader.flush();
        await reader.fh.close();
        reader = new LineReader(await open(file, 'r'), emit);
      }
    }
    reader.flush();
  } finally {
    await reader.fh.close().catch(() => undefined);
  }
}

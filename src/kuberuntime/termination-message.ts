// The termination message of a finished container, read as the kubelet reads it: the last 4096
// bytes of the host file mounted at terminationMessagePath (tail.ReadAtMost), or, with
// FallbackToLogsOnError and a failed container with an empty file, the tail of its CRI log (80
// lines, then the last 2048 bytes of their text). Only the end of either file is read, block by
// block from the end until enough is in hand: a container that logged 200 MiB costs a few KiB.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { ContainerState } from '../cri/cri-types.js';
import { parseCriLogLine } from '../node/pod-logs/cri-log-line.js';
import type { RuntimeContainer } from './runtime-pods.js';

const MAX_MESSAGE_BYTES = 4096;
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;
/** Log tail read per step, from the end backwards. */
const LOG_BLOCK_BYTES = 8 * 1024;
/**
 * The most of a log a fallback reads. Short lines reach 80 of them well before this (80 CRI prefixes
 * are ~3 KiB); long lines give 2048 bytes of text within the last one or two (containerd splits
 * lines at 16 KiB). Only a single line longer than this is cut, and then its end is what counts.
 */
const MAX_LOG_TAIL_BYTES = 64 * 1024;

/** A regular file, never followed through a symlink, never blocking on a FIFO. */
async function openRegular(file: string) {
  const fh = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const st = await fh.stat().catch(async (e: unknown) => {
    await fh.close();
    throw e;
  });
  if (!st.isFile()) {
    await fh.close();
    throw new Error(`${file} is not a regular file`);
  }
  return { fh, size: st.size };
}

/** The last `max` bytes of a file. */
async function readLast(file: string, max: number): Promise<string> {
  const { fh, size } = await openRegular(file);
  try {
    const len = Math.min(max, size);
    const buf = Buffer.alloc(len);
    const { bytesRead } = await fh.read(buf, 0, len, size - len);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** A line's text (a full line with its newline); a line that is not CRI format counts as it is. */
function lineText(l: string): string {
  const parsed = parseCriLogLine(Buffer.from(`${l}\n`));
  return parsed ? parsed.content.toString('utf8') : `${l}\n`;
}

/**
 * The text of CRI log lines (`<time> <stream> <F|P> <text>`), last lines first cut to size. With
 * `startsMidLine`, the content begins inside a line whose start was not read: that fragment is the
 * end of a line's text and is used only when the complete lines fall short.
 */
export function tailOfCriLog(content: string, lines: number, bytes: number, startsMidLine = false): string {
  const raw = content.split('\n');
  const fragment = startsMidLine ? raw.shift() : undefined;
  const texts = raw.filter((l) => l.length > 0).map(lineText);
  if (fragment && texts.length < lines) texts.unshift(fragment + '\n');
  let out = texts.slice(-lines).join('');
  if (Buffer.byteLength(out) > bytes) out = Buffer.from(out).subarray(-bytes).toString('utf8');
  return out;
}

/** Whether the lines of `window` whose start was read already give `lines` lines or `bytes` of text. */
function enough(window: Buffer, startsMidLine: boolean, lines: number, bytes: number): boolean {
  const firstNewline = window.indexOf(10);
  if (startsMidLine && firstNewline < 0) return false;
  const whole = startsMidLine ? window.subarray(firstNewline + 1) : window;
  let complete = 0;
  for (let i = whole.indexOf(10); i >= 0; i = whole.indexOf(10, i + 1)) complete++;
  if (complete >= lines) return true;
  return Buffer.byteLength(tailOfCriLog(whole.toString('utf8'), lines, Number.MAX_SAFE_INTEGER)) >= bytes;
}

/** The fallback message from the end of a CRI log, reading blocks backwards until enough is in hand. */
export async function readCriLogTail(
  file: string,
  lines = FALLBACK_LOG_LINES,
  bytes = FALLBACK_LOG_BYTES,
  maxRead = MAX_LOG_TAIL_BYTES,
): Promise<string> {
  const { fh, size } = await openRegular(file);
  try {
    const blocks: Buffer[] = [];
    let start = size;
    let window = Buffer.alloc(0);
    while (start > 0 && size - start < maxRead) {
      const len = Math.min(LOG_BLOCK_BYTES, start, maxRead - (size - start));
      const block = Buffer.alloc(len);
      const { bytesRead } = await fh.read(block, 0, len, start - len);
      if (bytesRead < len) break; // the file shrank under us: use what we have
      start -= len;
      blocks.unshift(block);
      window = Buffer.concat(blocks);
      if (enough(window, start > 0, lines, bytes)) break;
    }
    return tailOfCriLog(window.toString('utf8'), lines, bytes, start > 0);
  } finally {
    await fh.close();
  }
}

export async function readTerminationMessage(c: RuntimeContainer): Promise<string> {
  if (c.state !== ContainerState.CONTAINER_EXITED) return '';
  let message = '';
  if (c.terminationMessageHostPath)
    message = await readLast(c.terminationMessageHostPath, MAX_MESSAGE_BYTES).catch(() => '');
  if (message === '' && c.meta.terminationMessagePolicy === 'FallbackToLogsOnError' && c.exitCode !== 0 && c.logPath) {
    message = await readCriLogTail(c.logPath).catch(() => '');
  }
  return message;
}

// The termination message of a finished container, read as the kubelet reads it: from the host file
// mounted at terminationMessagePath (at most 4096 bytes), or, with FallbackToLogsOnError and a
// failed container with an empty file, from the tail of its log (80 lines / 2048 bytes).
import { open, readFile } from 'node:fs/promises';
import { ContainerState } from './cri-types.js';
import type { RuntimeContainer } from './runtime-pods.js';

const MAX_MESSAGE_BYTES = 4096;
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;

async function readHead(file: string, max: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(max);
    const { bytesRead } = await fh.read(buf, 0, max, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** The text of CRI log lines (`<time> <stream> <F|P> <text>`), last lines first cut to size. */
export function tailOfCriLog(content: string, lines: number, bytes: number): string {
  const texts = content
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => {
      const m = /^\S+ (?:stdout|stderr) ([FP]) (.*)$/.exec(l);
      return m ? m[2] + (m[1] === 'F' ? '\n' : '') : l + '\n';
    });
  let out = texts.slice(-lines).join('');
  if (Buffer.byteLength(out) > bytes) out = Buffer.from(out).subarray(-bytes).toString('utf8');
  return out;
}

export async function readTerminationMessage(c: RuntimeContainer): Promise<string> {
  if (c.state !== ContainerState.CONTAINER_EXITED) return '';
  let message = '';
  if (c.terminationMessageHostPath) message = await readHead(c.terminationMessageHostPath, MAX_MESSAGE_BYTES).catch(() => '');
  if (message === '' && c.meta.terminationMessagePolicy === 'FallbackToLogsOnError' && c.exitCode !== 0 && c.logPath) {
    message = tailOfCriLog(await readFile(c.logPath, 'utf8').catch(() => ''), FALLBACK_LOG_LINES, FALLBACK_LOG_BYTES);
  }
  return message;
}

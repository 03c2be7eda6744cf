// Reading a termination message reads only the end of the files involved: the bytes read are
// counted through node:fs/promises itself, so the test says how much was read, not how fast.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { RuntimeContainer } from '../../../src/kuberuntime/runtime-pods.js';
import { readCriLogTail, readTerminationMessage, tailOfCriLog } from '../../../src/kuberuntime/termination-message.js';
import { useTmpDir } from '../../support/tmp.js';
import { exitedContainer } from './fixtures.js';

const counted = vi.hoisted(() => ({ bytes: 0 }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof real.open = async (...args) => {
    const fh = await real.open(...args);
    const read = fh.read.bind(fh) as (...a: unknown[]) => Promise<{ bytesRead: number }>;
    Object.assign(fh, {
      read: async (...a: unknown[]) => {
        const r = await read(...a);
        counted.bytes += r.bytesRead;
        return r;
      },
    });
    return fh;
  };
  const readFile = (async (...args: Parameters<typeof real.readFile>) => {
    const r = await real.readFile(...args);
    counted.bytes += typeof r === 'string' ? Buffer.byteLength(r) : r.length;
    return r;
  }) as typeof real.readFile;
  return { ...real, open, readFile, default: { ...real, open, readFile } };
});

const tmp = useTmpDir('termination-tail');
const MiB = 1024 * 1024;

beforeEach(() => {
  counted.bytes = 0;
});

const exited = (over: Partial<RuntimeContainer>, policy = 'FallbackToLogsOnError'): RuntimeContainer =>
  exitedContainer(over, policy);

/** A file of `size` bytes that holds nothing on disk but `tail` at its end. */
function sparse(name: string, size: number, tail: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, '');
  fs.truncateSync(file, size - Buffer.byteLength(tail));
  fs.appendFileSync(file, tail);
  expect(fs.statSync(file).size).toBe(size);
  return file;
}

const criLine = (i: number, text: string, tag = 'F') =>
  `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000000000Z stderr ${tag} ${text}`;

describe('the FallbackToLogsOnError tail of a 200 MiB log', () => {
  it('reads a few KiB from the end, and gives the last 80 lines cut to 2048 bytes', async () => {
    const lines = Array.from({ length: 120 }, (_, i) => criLine(i, `line ${i} ${'.'.repeat(40)}`));
    const log = sparse('0.log', 200 * MiB, lines.join('\n') + '\n');
    const empty = path.join(tmp, 'empty');
    fs.writeFileSync(empty, '');
    const fallback = await readTerminationMessage(exited({ logPath: log, terminationMessageHostPath: empty }));
    const expected = tailOfCriLog(lines.join('\n') + '\n', 80, 2048);
    expect(fallback).toBe(expected);
    expect(fallback.endsWith('line 119 ........................................\n')).toBe(true);
    expect(Buffer.byteLength(fallback)).toBe(2048);
    expect(counted.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(counted.bytes).toBeGreaterThan(0);
  });

  it('of one endless line, reads at most 64 KiB and keeps the end of that line', async () => {
    const log = sparse('1.log', 200 * MiB, 'the end\n');
    const msg = await readCriLogTail(log);
    expect(counted.bytes).toBe(64 * 1024);
    expect(Buffer.byteLength(msg)).toBe(2048);
    expect(msg.endsWith('\0the end\n')).toBe(true);
  });
});

describe('the termination message file', () => {
  it('of 200 MiB: its last 4096 bytes, as the kubelet (tail.ReadAtMost), and nothing more is read', async () => {
    const file = sparse('msg', 200 * MiB, 'b'.repeat(5000));
    const msg = await readTerminationMessage(exited({ terminationMessageHostPath: file }, 'File'));
    expect(msg).toBe('b'.repeat(4096));
    expect(counted.bytes).toBe(4096);
  });

  it('that is a FIFO or a symlink is not read (and never blocks)', async () => {
    const fifo = path.join(tmp, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(await readTerminationMessage(exited({ terminationMessageHostPath: fifo }, 'File'))).toBe('');
    const target = path.join(tmp, 'secret');
    fs.writeFileSync(target, 'host secret');
    const link = path.join(tmp, 'link');
    fs.symlinkSync(target, link);
    expect(await readTerminationMessage(exited({ terminationMessageHostPath: link }, 'File'))).toBe('');
  });
});

describe('reading backwards gives what reading the whole log gives', () => {
  it('for logs of short, long and split (P) lines', async () => {
    // A small deterministic generator: the same cases every run.
    let seed = 12345;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 60; round++) {
      const lines: string[] = [];
      const count = 1 + rand(150);
      for (let i = 0; i < count; i++) {
        const kind = rand(10);
        const len = kind < 6 ? rand(60) : kind < 9 ? rand(3000) : 16 * 1024 - rand(100);
        lines.push(criLine(i, 'é'.repeat(rand(3)) + 'y'.repeat(len), kind === 9 && rand(2) === 0 ? 'P' : 'F'));
      }
      const content = lines.join('\n') + (rand(4) === 0 ? '' : '\n');
      const file = path.join(tmp, `r${round}.log`);
      fs.writeFileSync(file, content);
      expect(await readCriLogTail(file), `round ${round}`).toBe(tailOfCriLog(content, 80, 2048));
    }
  });
});

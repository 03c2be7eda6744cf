import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseLogOptions, type LogOptions } from '../../../src/server/logs/log-options.js';
import { openLogFile, type ContainerRunState } from '../../../src/node/pod-logs/follow.js';
import { streamContainerLog } from '../../../src/server/logs/log-stream.js';
import { waitFor } from '../../support/wait.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function logFile(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'logstream-'));
  dirs.push(dir);
  const path = join(dir, '0.log');
  writeFileSync(path, lines.map((l) => l + '\n').join(''));
  return path;
}

const cri = (t: string, stream: string, tag: string, text: string): string => `${t} ${stream} ${tag} ${text}`;

function opts(q: string): LogOptions {
  return parseLogOptions(new URLSearchParams(q), Date.parse('2026-01-01T00:00:10Z'));
}

async function read(path: string, q: string, state?: () => Promise<ContainerRunState>): Promise<string> {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  await streamContainerLog(path, await openLogFile(path), {
    options: opts(q),
    out,
    signal: new AbortController().signal,
    containerState: state,
  });
  return text;
}

const LOG = [
  cri('2026-01-01T00:00:01.5Z', 'stdout', 'F', 'one'),
  cri('2026-01-01T00:00:02.000000001Z', 'stderr', 'F', 'two'),
  cri('2026-01-01T00:00:03Z', 'stdout', 'P', 'thr'),
  cri('2026-01-01T00:00:03.1Z', 'stdout', 'F', 'ee'),
  cri('2026-01-01T00:00:04Z', 'stdout', 'F', 'four'),
];

describe('container log streaming (ReadLogs)', () => {
  it('writes the content of stdout and stderr, joining partial lines', async () => {
    expect(await read(logFile(LOG), '')).toBe('one\ntwo\nthree\nfour\n');
  });

  it('tailLines counts CRI lines from the end; 0 gives nothing', async () => {
    const p = logFile(LOG);
    expect(await read(p, 'tailLines=2')).toBe('ee\nfour\n');
    expect(await read(p, 'tailLines=0')).toBe('');
    expect(await read(p, 'tail=all')).toBe('one\ntwo\nthree\nfour\n');
    expect(await read(p, 'tailLines=100')).toBe('one\ntwo\nthree\nfour\n');
  });

  it('timestamps prefix each CRI line with the fixed nine-digit form', async () => {
    expect(await read(logFile(LOG.slice(0, 2)), 'timestamps=true')).toBe(
      '2026-01-01T00:00:01.500000000Z one\n2026-01-01T00:00:02.000000001Z two\n',
    );
  });

  it('limitBytes cuts the output, mid-line if need be', async () => {
    expect(await read(logFile(LOG), 'limitBytes=6')).toBe('one\ntw');
  });

  it('sinceTime and sinceSeconds skip older lines, at nanosecond precision', async () => {
    const p = logFile(LOG);
    expect(await read(p, 'sinceTime=2026-01-01T00:00:02Z')).toBe('two\nthree\nfour\n');
    // now = 00:00:10: 7 s back is 00:00:03.
    expect(await read(p, 'sinceSeconds=7')).toBe('three\nfour\n');
  });

  it('skips lines that are not CRI format and reads an unfinished last line', async () => {
    const p = logFile([LOG[0]!, 'garbage', cri('2026-01-01T00:00:05Z', 'stdout', 'F', 'last')]);
    appendFileSync(p, cri('2026-01-01T00:00:06Z', 'stdout', 'F', 'no newline'));
    expect(await read(p, '')).toBe('one\nlast\nno newline');
  });

  it('follows new lines, across a rotation, and ends once the container stopped and all is read', async () => {
    const p = logFile([LOG[0]!]);
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    let state: ContainerRunState = 'running';
    const done = streamContainerLog(p, await openLogFile(p), {
      options: opts('follow=true'),
      out,
      signal: new AbortController().signal,
      containerState: async () => state,
    });
    await waitFor(() => text === 'one\n', { timeoutMs: 10_000, what: 'the first line' });
    appendFileSync(p, cri('2026-01-01T00:00:05Z', 'stdout', 'F', 'appended') + '\n');
    await waitFor(() => text.endsWith('appended\n'), { timeoutMs: 10_000, what: 'an appended line' });
    // Rotation as the log manager does it: rename, then the runtime reopens a new file at the path.
    appendFileSync(p, cri('2026-01-01T00:00:06Z', 'stdout', 'F', 'last in old') + '\n');
    renameSync(p, `${p}.20260101-000006`);
    writeFileSync(p, cri('2026-01-01T00:00:07Z', 'stdout', 'F', 'first in new') + '\n');
    await waitFor(() => text.endsWith('first in new\n'), { timeoutMs: 10_000, what: 'the new file followed' });
    expect(text).toBe('one\nappended\nlast in old\nfirst in new\n');
    appendFileSync(p, cri('2026-01-01T00:00:08Z', 'stdout', 'F', 'written before it stopped') + '\n');
    state = 'stopped';
    await done;
    expect(text.endsWith('written before it stopped\n')).toBe(true);
  });

  it('ends a follow when the container is gone, and when the client leaves', async () => {
    const p = logFile([LOG[0]!]);
    await expect(read(p, 'follow=true', async () => 'gone')).resolves.toBe('one\n');
    const abort = new AbortController();
    const out = new PassThrough();
    out.resume();
    const done = streamContainerLog(p, await openLogFile(p), {
      options: opts('follow=true'),
      out,
      signal: abort.signal,
      containerState: async () => 'running',
    });
    abort.abort();
    await done;
  });

  it('reads no further while a slow client has not taken what was written (back-pressure)', async () => {
    const big = Array.from({ length: 20_000 }, (_, i) =>
      cri('2026-01-01T00:00:01Z', 'stdout', 'F', `line ${i} ${'x'.repeat(80)}`),
    );
    const p = logFile(big);
    let pending: (() => void) | undefined;
    let received = 0;
    // A writer that takes one chunk and then waits until told.
    const slow = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, cb) {
        received += chunk.length;
        pending = cb;
      },
    });
    const done = streamContainerLog(p, await openLogFile(p), {
      options: opts(''),
      out: slow,
      signal: new AbortController().signal,
    });
    await waitFor(() => pending !== undefined, { timeoutMs: 10_000, intervalMs: 1, what: 'the first write' });
    // Nothing more is read while the first chunk is not taken: the streamer waits for 'drain', and
    // the writer holds at most its buffer.
    await waitFor(() => slow.listenerCount('drain') > 0, {
      timeoutMs: 10_000,
      intervalMs: 1,
      what: 'the streamer to wait for drain',
    });
    expect(slow.writableLength).toBeLessThanOrEqual(2 * 64 * 1024 + 16 * 1024);
    const total = big.reduce((n, l) => n + l.length - 'YYYY-MM-DDTHH:MM:SSZ stdout F '.length + 1, 0);
    for (;;) {
      const cb = pending;
      pending = undefined;
      cb?.();
      if (received >= total) break;
      await waitFor(() => pending !== undefined || received >= total, {
        timeoutMs: 10_000,
        intervalMs: 1,
        what: 'the next chunk',
      });
    }
    await done;
    expect(received).toBe(total);
  });
});

describe('log options (PodLogOptions from the query)', () => {
  it('refuses bad values with the status the kubelet answers', () => {
    expect(() => opts('tailLines=-1')).toThrow(/tailLines: Invalid value: -1: must be greater than or equal to 0/);
    expect(() => opts('tailLines=x')).toThrow(expect.objectContaining({ statusCode: 400 }));
    expect(() => opts('limitBytes=0')).toThrow(expect.objectContaining({ statusCode: 422 }));
    expect(() => opts('sinceSeconds=0')).toThrow(expect.objectContaining({ statusCode: 422 }));
    expect(() => opts('sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z')).toThrow(/at most one of/);
    expect(() => opts('sinceTime=yesterday')).toThrow(expect.objectContaining({ statusCode: 400 }));
    expect(() => opts('follow=maybe')).toThrow(expect.objectContaining({ statusCode: 400 }));
    expect(opts('follow=1&previous=true&tailLines=3')).toMatchObject({ follow: true, previous: true, tailLines: 3 });
  });
});

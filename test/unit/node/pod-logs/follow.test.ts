// The one follower of container log files: lines as written, through rotation (rename and a new
// file, or truncation in place), into the next restart's file, and its ways to end.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  followContainerLog,
  MAX_LOG_LINE,
  openLogFile,
  type ContainerRunState,
  type FollowLogOptions,
  type LogLineSink,
} from '../../../../src/node/pod-logs/follow.js';
import { useTmpDir } from '../../../support/tmp.js';
import { waitFor } from '../../../support/wait.js';

const tmp = useTmpDir('pod-logs-follow');
let n = 0;

/** A fresh container log directory with `0.log` holding `content`. */
function logFile(content: string): string {
  const dir = path.join(tmp, `c${n++}`);
  fs.mkdirSync(dir);
  const file = path.join(dir, '0.log');
  fs.writeFileSync(file, content);
  return file;
}

class Lines implements LogLineSink {
  readonly got: string[] = [];
  flushes = 0;
  constructor(private readonly want = Number.POSITIVE_INFINITY) {}
  get done(): boolean {
    return this.got.length >= this.want;
  }
  line(raw: Buffer): void {
    this.got.push(raw.toString());
  }
  async flush(): Promise<boolean> {
    this.flushes++;
    return true;
  }
}

async function follow(
  file: string,
  sink: LogLineSink,
  o: Partial<FollowLogOptions> & { signal: AbortSignal },
): Promise<void> {
  await followContainerLog({ path: file, file: await openLogFile(file), sink, follow: true, forceCheckMs: 50, ...o });
}

/** A follower running in the background; `stop` ends it and gives the lines it handed on. */
function following(file: string, o: Partial<FollowLogOptions> = {}): { sink: Lines; stop(): Promise<string[]> } {
  const sink = new Lines();
  const ac = new AbortController();
  const done = follow(file, sink, { ...o, signal: ac.signal });
  return {
    sink,
    async stop() {
      ac.abort();
      await done;
      return sink.got;
    },
  };
}

const until = (what: string, fn: () => boolean) => waitFor(fn, { timeoutMs: 10_000, intervalMs: 5, what });

describe('container log follower', () => {
  it('hands on each line with its newline, and the unfinished end of a file as it is', async () => {
    const file = logFile('one\ntwo\nthree');
    const sink = new Lines();
    await followContainerLog({
      path: file,
      file: await openLogFile(file),
      sink,
      follow: false,
      signal: new AbortController().signal,
    });
    expect(sink.got).toEqual(['one\n', 'two\n', 'three']);
  });

  it('starts at the last tailLines lines, and stops once the sink wants no more', async () => {
    const file = logFile('1\n2\n3\n4\n');
    const tail = new Lines();
    await followContainerLog({
      path: file,
      file: await openLogFile(file),
      sink: tail,
      follow: false,
      tailLines: 2,
      signal: new AbortController().signal,
    });
    expect(tail.got).toEqual(['3\n', '4\n']);
    const two = new Lines(2);
    // Following, but a sink that is done ends the read at once.
    await follow(file, two, { signal: new AbortController().signal });
    expect(two.got).toEqual(['1\n', '2\n']);
  });

  it('holds an unfinished line while following until its newline is written', async () => {
    const file = logFile('');
    const f = following(file);
    fs.appendFileSync(file, 'hal');
    await until('a read of the unfinished line', () => f.sink.flushes > 0);
    fs.appendFileSync(file, 'f\nnext\n');
    await until('the completed line', () => f.sink.got.length === 2);
    expect(await f.stop()).toEqual(['half\n', 'next\n']);
  });

  it('follows a rotation: the old file read to its end (written to until the reopen), then the new one', async () => {
    const file = logFile('one\n');
    const f = following(file);
    await until('the first line', () => f.sink.got.length === 1);
    fs.renameSync(file, `${file}.20260101-000000.000`);
    // The runtime keeps writing to the renamed file until it is told to reopen.
    fs.appendFileSync(`${file}.20260101-000000.000`, 'two\nthr');
    fs.appendFileSync(`${file}.20260101-000000.000`, 'ee\n');
    fs.writeFileSync(file, 'four\n');
    await until('the new file', () => f.sink.got.length === 4);
    fs.appendFileSync(file, 'five\n');
    await until('an append to the new file', () => f.sink.got.length === 5);
    expect(await f.stop()).toEqual(['one\n', 'two\n', 'three\n', 'four\n', 'five\n']);
  });

  it('follows a truncation in place (copytruncate) from the start of the file', async () => {
    const file = logFile('a long first line\n');
    const f = following(file);
    await until('the first line', () => f.sink.got.length === 1);
    fs.truncateSync(file, 0);
    fs.appendFileSync(file, 'after\n');
    await until('the line after the truncation', () => f.sink.got.length === 2);
    expect(await f.stop()).toEqual(['a long first line\n', 'after\n']);
  });

  it("follows into the next restart's file, after the last lines of the old one", async () => {
    const file = logFile('run 0\n');
    const restarts: string[] = [];
    const f = following(file, {
      restarts: { restart: 0, onRestart: (p, r) => restarts.push(`${r} ${path.basename(p)}`) },
    });
    await until('the first line', () => f.sink.got.length === 1);
    fs.appendFileSync(file, 'last of run 0');
    fs.writeFileSync(path.join(path.dirname(file), '2.log'), 'run 2\n');
    await until("the restart's file", () => f.sink.got.length === 3);
    fs.appendFileSync(path.join(path.dirname(file), '2.log'), 'more\n');
    await until("an append to the restart's file", () => f.sink.got.length === 4);
    expect(await f.stop()).toEqual(['run 0\n', 'last of run 0', 'run 2\n', 'more\n']);
    expect(restarts).toEqual(['2 2.log']);
  });

  it('ends once the container is not running, after what it wrote', async () => {
    const file = logFile('one\n');
    const sink = new Lines();
    let state: ContainerRunState = 'running';
    const done = follow(file, sink, { signal: new AbortController().signal, containerState: async () => state });
    await until('the first line', () => sink.got.length === 1);
    fs.appendFileSync(file, 'two\nno newline');
    state = 'gone';
    await done;
    expect(sink.got).toEqual(['one\n', 'two\n', 'no newline']);
  });

  it('cuts a line longer than any CRI line, ending it, and reads on after its newline', async () => {
    const file = logFile(`${'x'.repeat(MAX_LOG_LINE + 200_000)}\nnext\n`);
    const sink = new Lines();
    await followContainerLog({
      path: file,
      file: await openLogFile(file),
      sink,
      follow: false,
      signal: new AbortController().signal,
    });
    expect(sink.got.map((l) => l.length)).toEqual([MAX_LOG_LINE + 1, 5]);
    expect(sink.got[0]!.endsWith('x\n')).toBe(true);
    expect(sink.got[1]).toBe('next\n');
  });
});

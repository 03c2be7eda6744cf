import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, openSync, writeSync, closeSync, writeFileSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_MANIFEST_BYTES, readManifestFile, type ReadResult } from '../../../src/config/read-manifest';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { waitFor } from '../../support/wait';
import { WEB_YAML } from './helpers';

const dir = makeTmpDir('read-manifest');
afterAll(() => removeTmpDir(dir));
let n = 0;
const file = (content: string | Buffer): string => {
  const f = join(dir, `f${++n}.yaml`);
  writeFileSync(f, content);
  return f;
};

describe('readManifestFile', () => {
  it('returns the bytes of a quiet file', async () => {
    const r = await readManifestFile(file(WEB_YAML), { settleMs: 0 });
    expect(r.kind === 'ok' && r.bytes.toString()).toBe(WEB_YAML);
  });

  it('refuses an empty file', async () => {
    expect(await readManifestFile(file(''), { settleMs: 0 })).toEqual({ kind: 'error', message: 'file is empty' });
  });

  it('refuses a file over 10 MiB, reads one of exactly 10 MiB', async () => {
    expect(await readManifestFile(file(Buffer.alloc(MAX_MANIFEST_BYTES + 1, 32)), { settleMs: 0 })).toEqual({
      kind: 'error',
      message: 'file is larger than the 10 MiB limit',
    });
    const r = await readManifestFile(file(Buffer.alloc(MAX_MANIFEST_BYTES, 32)), { settleMs: 0 });
    expect(r.kind === 'ok' && r.bytes.length).toBe(MAX_MANIFEST_BYTES);
  });

  it('says missing, directory, or other for what is not a regular file', async () => {
    expect(await readManifestFile(join(dir, 'nope.yaml'))).toEqual({ kind: 'missing' });
    mkdirSync(join(dir, 'sub'));
    expect(await readManifestFile(join(dir, 'sub'))).toEqual({ kind: 'not-file', what: 'directory' });
    execFileSync('mkfifo', [join(dir, 'fifo')]);
    expect(await readManifestFile(join(dir, 'fifo'))).toEqual({ kind: 'not-file', what: 'other' });
  });

  it('follows a symlink to a file', async () => {
    const target = file(WEB_YAML);
    symlinkSync(target, join(dir, 'link.yaml'));
    const r = await readManifestFile(join(dir, 'link.yaml'), { settleMs: 0 });
    expect(r.kind).toBe('ok');
  });

  it('does not take a file as renamed into place when its write event arrives during the reads', async () => {
    const half = Math.floor(WEB_YAML.length / 2);
    const f = file(WEB_YAML.slice(0, half));
    // The writer's event is seen only after the read began (the second look at the event record);
    // the rest of the file is written at that moment.
    let looks = 0;
    let eventAt: number | undefined;
    const lastWriteEventAt = (): number | undefined => {
      if (++looks === 2 && eventAt === undefined) {
        eventAt = Date.now();
        writeFileSync(f, WEB_YAML);
      }
      return eventAt;
    };
    const r = await readManifestFile(f, { settleMs: 30, lastWriteEventAt });
    expect(looks).toBeGreaterThanOrEqual(2);
    expect(r.kind === 'ok' && r.bytes.toString()).toBe(WEB_YAML);
  });

  it("takes a fresh file at once when it ends as Kubernetes' YAML writer ends a Pod (kubeadm's one in-place write), and waits for one cut short", async () => {
    const whole = `${WEB_YAML.trimEnd()}\nstatus: {}\n`;
    for (const [content, expected] of [
      [whole, 'ok'],
      [whole.slice(0, -3), 'changing'],
      [`${whole}  extra: 1\n`, 'changing'],
    ] as const) {
      const f = file(content);
      // Always fresh, and its write event just heard: without the early look, one attempt only
      // sleeps out the settle time and gives up.
      const ctime = statSync(f).ctimeMs;
      const heard = Date.now();
      const r = await readManifestFile(f, {
        settleMs: 40,
        maxAttempts: 1,
        now: () => ctime,
        lastWriteEventAt: () => heard,
      });
      expect(r.kind).toBe(expected);
      if (r.kind === 'ok') expect(r.bytes.toString()).toBe(whole);
    }
  });

  it('looks again as soon as an empty fresh file is written (kubeadm: created, then written), not after the settle time', async () => {
    const whole = `${WEB_YAML.trimEnd()}\nstatus: {}\n`;
    const f = file('');
    let heard: number | undefined = Date.now();
    let looks = 0;
    const lastWriteEventAt = (): number | undefined => {
      // The write comes (and its event is heard) while the reader waits at the empty file.
      if (++looks === 3) {
        writeFileSync(f, whole);
        heard = Date.now() + 1;
      }
      return heard;
    };
    // One attempt and a settle time far beyond the test's: only the early look can return the file.
    const r = await readManifestFile(f, { settleMs: 600_000, maxAttempts: 1, lastWriteEventAt });
    expect(r.kind === 'ok' && r.bytes.toString()).toBe(whole);
  });

  it('waits for a writer that pauses between two chunks and returns the whole file', async () => {
    const f = file('');
    const fd = openSync(f, 'r+');
    const half = Math.floor(WEB_YAML.length / 2);
    writeSync(fd, WEB_YAML.slice(0, half), 0);
    // The reader's clock stands still at the first chunk's write while the writer pauses: however
    // long the pause takes in real time, it stays shorter than the settle time.
    let frozenAt: number | undefined = statSync(f).ctimeMs;
    let looks = 0;
    let result: ReadResult | undefined;
    const reading = readManifestFile(f, {
      settleMs: 50,
      maxAttempts: 1000,
      now: () => (looks++, frozenAt ?? Date.now()),
    }).then((r) => (result = r));
    // Three looks at the half-written file: a reader that took it would have been done after two.
    await waitFor(() => looks >= 3 || result !== undefined, {
      timeoutMs: 10_000,
      intervalMs: 5,
      what: 'the reader to look at the first chunk three times',
    });
    expect(result).toBeUndefined();
    writeSync(fd, WEB_YAML.slice(half), half);
    closeSync(fd);
    frozenAt = undefined;
    const r = await reading;
    expect(r.kind === 'ok' && r.bytes.toString()).toBe(WEB_YAML);
  });

  it('gives up with "changing" (not an error) while a writer keeps appending', async () => {
    const f = file('a: 1\n');
    let appends = 0;
    // The writer appends each time the reader looks at the file, between its stat and its read.
    const appendNow = (): number => {
      writeFileSync(f, `a: ${++appends}\n`, { flag: 'a' });
      return Date.now();
    };
    const r = await readManifestFile(f, { settleMs: 0, debounceMs: 10, maxAttempts: 4, lastWriteEventAt: appendNow });
    expect(r).toEqual({ kind: 'changing' });
    expect(appends).toBe(4);
  });
  it('waits out a write event heard after the write, so that one quiet read is enough', async () => {
    const f = file(WEB_YAML);
    const ctime = statSync(f).ctimeMs;
    // The event loop heard the in-place write 20 ms after the file's ctime (a busy agent) and
    // looks at the file 5 ms after that: the clock runs 25 ms ahead of the ctime.
    const eventAt = ctime + 20;
    const start = Date.now();
    const now = (): number => ctime + 25 + (Date.now() - start);
    // Two attempts: the settle wait, then the read. Waking when the ctime is settleMs old would
    // find the event younger than that, read twice and run out of attempts ('changing').
    const r = await readManifestFile(f, { settleMs: 50, maxAttempts: 2, now, lastWriteEventAt: () => eventAt });
    expect(r.kind === 'ok' && r.bytes.toString()).toBe(WEB_YAML);
  });
});

import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { renameSync, statSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { STABLE_AFTER_MS, UnchangedFiles } from '../../../src/config/unchanged-files';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { waitFor } from '../../support/wait';

const dir = makeTmpDir('unchanged-files');
afterAll(() => removeTmpDir(dir));
const later = (f: string) => statSync(f).ctimeMs + STABLE_AFTER_MS;

describe('UnchangedFiles', () => {
  it('says unchanged only for a remembered file whose stat is the same', async () => {
    const f = join(dir, 'a.yaml');
    writeFileSync(f, 'one');
    const u = new UnchangedFiles();
    expect(await u.unchanged(f)).toBe(false);
    u.remember(f, statSync(f), later(f));
    expect(await u.unchanged(f)).toBe(true);
    expect(await u.unchanged(f)).toBe(true);
  });

  it('says missing for a remembered file that is gone, and read once it is forgotten', async () => {
    const f = join(dir, 'gone.yaml');
    writeFileSync(f, 'one');
    const u = new UnchangedFiles();
    u.remember(f, statSync(f), later(f));
    rmSync(f);
    expect(await u.check(f)).toBe('missing');
    // Not remembered any more: nothing is known, the read decides.
    expect(await u.check(f)).toBe('read');
    writeFileSync(f, 'two');
    expect(await u.check(f)).toBe('read');
  });

  it('sees a same-size rewrite whose mtime was put back (ctime moves)', async () => {
    const f = join(dir, 'b.yaml');
    writeFileSync(f, 'one');
    const st = statSync(f);
    const u = new UnchangedFiles();
    u.remember(f, st, later(f));
    // File times come from a coarse clock: wait until a new write gets a later ctime than f's.
    const ref = join(dir, 'b.ref');
    await waitFor(
      () => {
        writeFileSync(ref, '');
        return statSync(ref).ctimeMs > st.ctimeMs;
      },
      { timeoutMs: 10_000, intervalMs: 1, what: 'the file clock to move past the first write' },
    );
    execFileSync('touch', ['-r', f, ref]); // keeps the nanoseconds, which Date-based utimes loses
    writeFileSync(f, 'two');
    execFileSync('touch', ['-m', '-r', ref, f]);
    expect(statSync(f).mtimeMs).toBe(st.mtimeMs);
    expect(statSync(f).size).toBe(st.size);
    expect(statSync(f).ctimeMs).toBeGreaterThan(st.ctimeMs); // what is left to tell the rewrite apart
    expect(await u.unchanged(f)).toBe(false);
    // Forgotten after a change: a later identical stat does not bring it back.
    expect(await u.unchanged(f)).toBe(false);
  });

  it('sees a file renamed over it, and a file that is gone', async () => {
    const f = join(dir, 'c.yaml');
    writeFileSync(f, 'one');
    const u = new UnchangedFiles();
    u.remember(f, statSync(f), later(f));
    writeFileSync(join(dir, '.c.tmp'), 'one');
    renameSync(join(dir, '.c.tmp'), f);
    expect(await u.unchanged(f)).toBe(false);
    u.remember(f, statSync(f), later(f));
    rmSync(f);
    expect(await u.unchanged(f)).toBe(false);
  });

  it('does not remember a read taken while the file had just changed', async () => {
    const f = join(dir, 'd.yaml');
    writeFileSync(f, 'one');
    const u = new UnchangedFiles();
    u.remember(f, statSync(f), statSync(f).ctimeMs + STABLE_AFTER_MS - 1);
    expect(await u.unchanged(f)).toBe(false);
  });
});

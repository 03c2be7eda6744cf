import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DATA_DIR_NAME,
  validatePayloadPath,
  writeAtomically,
  type FileProjection,
} from '../../../src/node/atomic-writer.js';
import { VolumeError } from '../../../src/node/volume-errors.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('atomic-writer');
let n = 0;

function target(): string {
  const d = path.join(tmp, `t${n++}`);
  fs.mkdirSync(d);
  return d;
}

const f = (data: string, mode = 0o644): FileProjection => ({ data: Buffer.from(data), mode });
const payload = (o: Record<string, FileProjection>) => new Map(Object.entries(o));
const tsDirs = (d: string) => fs.readdirSync(d).filter((x) => x.startsWith('..') && x !== DATA_DIR_NAME);

describe('writeAtomically', () => {
  it('writes a timestamped dir, ..data linked to it, and user-visible links into ..data', async () => {
    const d = target();
    const changed = await writeAtomically(d, payload({ a: f('1'), 'sub/b': f('2', 0o600) }), {
      now: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5)),
    });
    expect(changed).toBe(true);
    const ts = fs.readlinkSync(path.join(d, DATA_DIR_NAME));
    expect(ts).toMatch(/^\.\.2026_01_02_03_04_05\..+$/);
    expect(fs.statSync(path.join(d, ts)).mode & 0o777).toBe(0o755);
    expect(fs.readlinkSync(path.join(d, 'a'))).toBe('..data/a');
    expect(fs.readlinkSync(path.join(d, 'sub'))).toBe('..data/sub');
    expect(fs.readFileSync(path.join(d, 'a'), 'utf8')).toBe('1');
    expect(fs.readFileSync(path.join(d, 'sub', 'b'), 'utf8')).toBe('2');
    expect(fs.statSync(path.join(d, 'sub', 'b')).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(d).sort()).toEqual(['..data', ts, 'a', 'sub'].sort());
  });

  it('changes nothing for an identical payload: no new directory, ..data untouched', async () => {
    const d = target();
    await writeAtomically(d, payload({ a: f('1') }));
    const before = fs.readlinkSync(path.join(d, DATA_DIR_NAME));
    const ino = fs.lstatSync(path.join(d, DATA_DIR_NAME)).ino;
    expect(await writeAtomically(d, payload({ a: f('1') }))).toBe(false);
    expect(fs.readlinkSync(path.join(d, DATA_DIR_NAME))).toBe(before);
    expect(fs.lstatSync(path.join(d, DATA_DIR_NAME)).ino).toBe(ino);
    expect(tsDirs(d)).toEqual([before]);
  });

  it('a change swaps ..data to a new dir, removes the old dir and the links of files gone', async () => {
    const d = target();
    await writeAtomically(d, payload({ a: f('1'), gone: f('x'), 'dir/x': f('y') }));
    const old = fs.readlinkSync(path.join(d, DATA_DIR_NAME));
    // Held open across the swap, as a reader in a container would: it keeps seeing the old version.
    const held = fs.openSync(path.join(d, 'a'), 'r');
    expect(await writeAtomically(d, payload({ a: f('2'), 'dir/z': f('w') }))).toBe(true);
    const now = fs.readlinkSync(path.join(d, DATA_DIR_NAME));
    expect(now).not.toBe(old);
    expect(tsDirs(d)).toEqual([now]);
    expect(fs.readFileSync(path.join(d, 'a'), 'utf8')).toBe('2');
    expect(fs.readFileSync(held, 'utf8')).toBe('1');
    fs.closeSync(held);
    expect(fs.existsSync(path.join(d, 'gone'))).toBe(false);
    expect(fs.readdirSync(path.join(d, 'dir'))).toEqual(['z']);
  });

  it('a mode change alone is a change', async () => {
    const d = target();
    await writeAtomically(d, payload({ a: f('1', 0o644) }));
    expect(await writeAtomically(d, payload({ a: f('1', 0o400) }))).toBe(true);
    expect(fs.statSync(path.join(d, 'a')).mode & 0o777).toBe(0o400);
  });

  it('an empty payload after files removes every link', async () => {
    const d = target();
    await writeAtomically(d, payload({ a: f('1') }));
    expect(await writeAtomically(d, payload({}))).toBe(true);
    expect(fs.readdirSync(d).filter((x) => !x.startsWith('..'))).toEqual([]);
  });

  it('sets the modes whatever the umask', async () => {
    const d = target();
    const old = process.umask(0o077);
    try {
      await writeAtomically(d, payload({ a: f('1', 0o644), 'x/y': f('2', 0o666) }));
    } finally {
      process.umask(old);
    }
    expect(fs.statSync(path.join(d, 'a')).mode & 0o777).toBe(0o644);
    expect(fs.statSync(path.join(d, 'x', 'y')).mode & 0o777).toBe(0o666);
    expect(fs.statSync(path.join(d, 'x')).mode & 0o777).toBe(0o755);
  });

  it('calls setPerms on the new directory before it goes live', async () => {
    const d = target();
    let seen: string | undefined;
    await writeAtomically(d, payload({ a: f('1') }), {
      setPerms: async (ts) => {
        seen = ts;
        expect(fs.existsSync(path.join(ts, 'a'))).toBe(true);
        expect(fs.existsSync(path.join(d, DATA_DIR_NAME))).toBe(false);
        return Promise.resolve();
      },
    });
    expect(path.basename(seen!)).toBe(fs.readlinkSync(path.join(d, DATA_DIR_NAME)));
  });

  it('removes a half-written dir and a stale ..data_tmp left by a crash', async () => {
    const d = target();
    fs.mkdirSync(path.join(d, '..2020_01_01_00_00_00.abc'));
    fs.symlinkSync('nowhere', path.join(d, '..data_tmp'));
    await writeAtomically(d, payload({ a: f('1') }));
    expect(tsDirs(d)).toEqual([fs.readlinkSync(path.join(d, DATA_DIR_NAME))]);
  });

  it('does not follow a ..data that names something outside the volume', async () => {
    const d = target();
    const outside = path.join(tmp, `outside${n}`);
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'a'), '1');
    fs.symlinkSync(outside, path.join(d, DATA_DIR_NAME));
    // Treated as no old version: written anew, and the outside directory stays as it was.
    expect(await writeAtomically(d, payload({ a: f('1') }))).toBe(true);
    expect(fs.readlinkSync(path.join(d, DATA_DIR_NAME))).toMatch(/^\.\.\d{4}_/);
    expect(fs.readdirSync(outside)).toEqual(['a']);
  });

  it('refuses a user-visible name that is not its link (nothing made live)', async () => {
    const d = target();
    fs.writeFileSync(path.join(d, 'a'), 'planted');
    await expect(writeAtomically(d, payload({ a: f('1') }))).rejects.toThrow(VolumeError);
    expect(fs.readFileSync(path.join(d, 'a'), 'utf8')).toBe('planted');
  });

  it('replaces a link that points elsewhere', async () => {
    const d = target();
    fs.symlinkSync('/etc/passwd', path.join(d, 'a'));
    await writeAtomically(d, payload({ a: f('1') }));
    expect(fs.readlinkSync(path.join(d, 'a'))).toBe('..data/a');
  });
});

describe('validatePayloadPath (the kubelet validatePath rules)', () => {
  it.each([
    ['', 'must not be empty'],
    ['/etc/passwd', 'must be relative path'],
    ['../x', "must not contain '..'"],
    ['a/../../x', "must not contain '..'"],
    ['..data', "must not start with '..'"],
    ['..x/y', "must not start with '..'"],
    ['x'.repeat(256), 'filenames must be less than or equal to 255 characters'],
    [`${'a/'.repeat(2049)}b`, 'must be less than or equal to 4096 characters'],
  ])('refuses %j', (p, why) => {
    expect(() => validatePayloadPath(p)).toThrow(why);
  });

  it('cleans what it accepts', () => {
    expect(validatePayloadPath('a//b/./c')).toBe('a/b/c');
    expect(validatePayloadPath('.hidden')).toBe('.hidden');
  });

  it('refuses a payload with a file that is also a directory, and a bad mode', async () => {
    const d = target();
    await expect(writeAtomically(d, payload({ a: f('1'), 'a/b': f('2') }))).rejects.toThrow(
      '"a" is both a file and the directory of "a/b"',
    );
    await expect(writeAtomically(d, payload({ a: f('1', 0o1777) }))).rejects.toThrow('invalid mode');
    expect(fs.readdirSync(d)).toEqual([]);
  });
});

// subPath resolution never leaves the volume: symlinks out of it (absolute, relative, to '..',
// dangling) are refused at any component and nothing is created outside; symlinks that stay
// inside are resolved as the kubelet resolves them, and the final O_NOFOLLOW walk refuses any
// symlink at all, which is what makes a later swap useless.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSubPath, walkInVolume, type OpenedSubPath } from '../../../src/node/safe-subpath.js';
import { SubPathError } from '../../../src/node/volume-errors.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('safe-subpath');
const vol = path.join(tmp, 'vol');
const outside = path.join(tmp, 'outside');
const opened: OpenedSubPath[] = [];

beforeAll(() => {
  fs.mkdirSync(path.join(vol, 'sub'), { recursive: true });
  fs.chmodSync(vol, 0o777);
  fs.writeFileSync(path.join(vol, 'sub', 'f'), 'in');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 'secret'), 'out');
  fs.symlinkSync(outside, path.join(vol, 'abs'));
  fs.symlinkSync('../outside', path.join(vol, 'rel'));
  fs.symlinkSync('..', path.join(vol, 'up'));
  fs.symlinkSync(path.join(outside, 'nope'), path.join(vol, 'dangling'));
  fs.symlinkSync('sub', path.join(vol, 'inner'));
  fs.symlinkSync('/etc', path.join(vol, 'sub', 'etc'));
});

afterAll(async () => {
  for (const o of opened) await o.handle.close();
});

async function open(subPath: string): Promise<OpenedSubPath> {
  const o = await openSubPath(vol, subPath);
  opened.push(o);
  return o;
}

async function refusal(subPath: string): Promise<string> {
  const err = await openSubPath(vol, subPath).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(SubPathError);
  return (err as Error).message;
}

const outsideEntries = () => fs.readdirSync(outside).sort();
const tmpEntries = () => fs.readdirSync(tmp).sort();

describe('openSubPath', () => {
  it('opens an existing directory and a file as the last component', async () => {
    const d = await open('sub');
    expect(d.stat.isDirectory()).toBe(true);
    expect(d.stat.ino).toBe(fs.statSync(path.join(vol, 'sub')).ino);
    expect(d.resolved).toBe('sub');
    const f = await open('./sub//f');
    expect(f.stat.isFile()).toBe(true);
    expect(f.stat.ino).toBe(fs.statSync(path.join(vol, 'sub', 'f')).ino);
  });

  it('opens a FIFO without blocking on it', async () => {
    fs.mkdirSync(path.join(vol, 'pipes'));
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [path.join(vol, 'pipes', 'p')]);
    expect((await open('pipes/p')).stat.isFIFO()).toBe(true);
  });

  it('creates missing directories inside the volume with its mode, whatever the umask', async () => {
    const o = await open('new/deep');
    expect(o.stat.isDirectory()).toBe(true);
    expect(o.resolved).toBe('new/deep');
    for (const d of ['new', 'new/deep']) expect(fs.statSync(path.join(vol, d)).mode & 0o7777).toBe(0o777);
  });

  it('resolves a symlink that stays inside the volume, as the kubelet does', async () => {
    const o = await open('inner/f');
    expect(o.resolved).toBe('sub/f');
    expect(o.stat.ino).toBe(fs.statSync(path.join(vol, 'sub', 'f')).ino);
  });

  it.each([
    ['an absolute symlink', 'abs'],
    ['a relative symlink', 'rel'],
    ['a symlink to ..', 'up'],
    ['a symlink deeper down', 'sub/etc'],
  ])('refuses %s out of the volume, as the whole subPath or on the way', async (_what, link) => {
    expect(await refusal(link)).toBe(`subPath ${JSON.stringify(link)} resolves outside the volume`);
    expect(await refusal(`${link}/secret`)).toMatch(/resolves outside the volume/);
    expect(await refusal(`${link}/x/y`)).toMatch(/resolves outside the volume/);
  });

  it('creates nothing outside the volume through any of them', () => {
    expect(outsideEntries()).toEqual(['secret']);
    expect(tmpEntries()).toEqual(['outside', 'vol']);
    expect(fs.existsSync('/etc/x')).toBe(false);
  });

  it('refuses a dangling symlink instead of creating its target', async () => {
    expect(await refusal('dangling')).toBe('subPath "dangling": "dangling" is a symlink');
    expect(await refusal('dangling/x')).toBe('subPath "dangling/x": "dangling" is a symlink');
    expect(outsideEntries()).toEqual(['secret']);
  });

  it('refuses a file where a directory is needed', async () => {
    expect(await refusal('sub/f/x')).toMatch(/^subPath "sub\/f\/x": ENOTDIR/);
  });
});

describe('walkInVolume (the O_NOFOLLOW walk after resolution)', () => {
  const walk = (parts: string[], create: string[] = []) => walkInVolume(vol, parts, create, 0o755, parts.join('/'));

  it.each([
    ['a symlink inside the volume as the last component', ['inner'], /"inner" is a symlink$/],
    ['an inside symlink on the way', ['inner', 'f'], /"inner" is a symlink$/],
    ['an absolute symlink on the way', ['abs', 'secret'], /"abs" is a symlink$/],
    ['a relative symlink', ['rel'], /"rel" is a symlink$/],
    ['a symlink to ..', ['up', 'vol'], /"up" is a symlink$/],
    ['a symlink deeper down', ['sub', 'etc', 'passwd'], /"sub\/etc" is a symlink$/],
  ])('refuses %s, as if it had been swapped in after the check', async (_what, parts, why) => {
    const err = await walk(parts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubPathError);
    expect((err as Error).message).toMatch(why);
  });

  it('does not create below a symlink swapped in where a directory was resolved', async () => {
    const err = await walk(['abs'], ['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SubPathError);
    expect(outsideEntries()).toEqual(['secret']);
  });
});

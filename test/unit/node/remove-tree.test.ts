// The pod-directory remove stays on one mount and never follows a symlink.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { removeTreeOnOneMount } from '../../../src/node/remove-tree.js';
import { PodCleanupError } from '../../../src/node/volume-errors.js';
import { IS_ROOT, unmountAllUnder } from '../../support/mounts.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('remove-tree');
afterAll(() => unmountAllUnder(tmp));
const tree = path.join(tmp, 'tree');
const outside = path.join(tmp, 'outside');

beforeEach(() => {
  unmountAllUnder(tmp);
  fs.rmSync(tree, { recursive: true, force: true });
  fs.mkdirSync(path.join(tree, 'a', 'b', 'c'), { recursive: true });
  fs.writeFileSync(path.join(tree, 'a', 'b', 'c', 'f'), 'x');
  fs.writeFileSync(path.join(tree, 'top-file'), 'x');
  fs.mkdirSync(path.join(outside, 'keep'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'keep', 'precious'), 'do not delete');
});

const outsideIntact = () =>
  expect(fs.readFileSync(path.join(outside, 'keep', 'precious'), 'utf8')).toBe('do not delete');

async function refusal(dir: string): Promise<PodCleanupError> {
  const err = await removeTreeOnOneMount(dir).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(PodCleanupError);
  return err as PodCleanupError;
}

describe('removeTreeOnOneMount', () => {
  it('removes a tree, unlinking symlinks (absolute, relative, to ..) without following them', async () => {
    fs.symlinkSync(outside, path.join(tree, 'abs'));
    fs.symlinkSync('../../outside', path.join(tree, 'a', 'rel'));
    fs.symlinkSync('..', path.join(tree, 'a', 'b', 'up'));
    fs.symlinkSync(path.join(outside, 'keep', 'precious'), path.join(tree, 'file-link'));
    await removeTreeOnOneMount(tree);
    expect(fs.existsSync(tree)).toBe(false);
    outsideIntact();
  });

  it('is done when the directory is already gone', async () => {
    fs.rmSync(tree, { recursive: true });
    await removeTreeOnOneMount(tree);
  });

  it('refuses a symlink as the directory to remove', async () => {
    const link = path.join(tmp, 'link-to-outside');
    fs.symlinkSync(outside, link);
    expect((await refusal(link)).message).toMatch(/^cannot open .*link-to-outside: (ELOOP|ENOTDIR)$/);
    outsideIntact();
    fs.unlinkSync(link);
  });

  describe.skipIf(!IS_ROOT)('with mounts (needs root)', () => {
    it('refuses to cross into a bind mount of another directory, and finishes once it is unmounted', async () => {
      const mnt = path.join(tree, 'a', 'b', 'mnt');
      fs.mkdirSync(mnt);
      execFileSync('mount', ['--bind', outside, mnt]);
      const err = await refusal(tree);
      expect(err.message).toBe(
        `refusing to remove ${tree}: ${mnt} is a mount point (or another filesystem); unmount it first`,
      );
      expect(err.path).toBe(mnt);
      expect(err.retryable).toBe(true);
      outsideIntact();
      execFileSync('umount', [mnt]);
      await removeTreeOnOneMount(tree);
      expect(fs.existsSync(tree)).toBe(false);
      outsideIntact();
    });

    it('refuses a file with a bind mount on it', async () => {
      const target = path.join(tree, 'a', 'bound-file');
      fs.writeFileSync(target, '');
      execFileSync('mount', ['--bind', path.join(outside, 'keep', 'precious'), target]);
      expect((await refusal(tree)).path).toBe(target);
      outsideIntact();
    });

    it('refuses when the directory itself is a mount point', async () => {
      execFileSync('mount', ['--bind', outside, tree]);
      expect((await refusal(tree)).path).toBe(tree);
      outsideIntact();
    });
  });
});

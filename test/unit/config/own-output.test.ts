// The agent's own stdout/stderr are found by device and inode, whatever name or symlink leads there.
import { closeSync, openSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ownOutputFiles, ownOutputReason } from '../../../src/config/own-output';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';

const dir = makeTmpDir('own-output');
afterAll(() => removeTmpDir(dir));

describe('own output files', () => {
  it('knows a regular file open on a descriptor, and a symlink to it, and nothing else', () => {
    const log = join(dir, 'agent.log');
    writeFileSync(log, '');
    symlinkSync(log, join(dir, 'manifest.yaml'));
    writeFileSync(join(dir, 'other.yaml'), 'x');
    const fd = openSync(log, 'a');
    try {
      const own = ownOutputFiles([{ fd, what: 'standard error' }]);
      expect(own).toHaveLength(1);
      expect(ownOutputReason(statSync(join(dir, 'manifest.yaml')), own)).toBe(
        "the file is the agent's own standard error (its log): bootlet never reads its own output as a manifest; remove it from the manifest path",
      );
      expect(ownOutputReason(statSync(join(dir, 'other.yaml')), own)).toBeUndefined();
    } finally {
      closeSync(fd);
    }
  });

  it('skips descriptors that are not regular files or not open', () => {
    const fd = openSync('/dev/null', 'w');
    try {
      expect(
        ownOutputFiles([
          { fd, what: 'standard output' },
          { fd: 999_999, what: 'standard error' },
        ]),
      ).toEqual([]);
    } finally {
      closeSync(fd);
    }
  });
});

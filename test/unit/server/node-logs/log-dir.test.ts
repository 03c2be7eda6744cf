// Reading only inside the node's log directory: securejoin's resolution (symlinks read as if the
// directory were the root) and the open that refuses what leads out of it.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { goStatProblem, openInside, scopedJoin } from '../../../../src/server/node-logs/log-dir.js';
import { useTmpDir } from '../../../support/tmp.js';

const tmp = useTmpDir('log-dir');
const root = join(tmp, 'var-log');
const outside = join(tmp, 'secret');
mkdirSync(join(root, 'pods', 'ns_p_uid', 'c'), { recursive: true });
mkdirSync(join(root, 'containers'));
writeFileSync(join(root, 'syslog'), 'sys\n');
writeFileSync(join(root, 'pods', 'ns_p_uid', 'c', '0.log'), 'pod log\n');
writeFileSync(outside, 'secret\n');
symlinkSync(join(root, 'pods', 'ns_p_uid', 'c', '0.log'), join(root, 'containers', 'p_ns_c-id.log'));
symlinkSync(outside, join(root, 'escape'));
symlinkSync('../secret', join(root, 'relative-escape'));
symlinkSync('/etc', join(root, 'etc-link'));
symlinkSync('loop', join(root, 'loop'));
execFileSync('mkfifo', [join(root, 'fifo')]);

describe('scopedJoin (securejoin.SecureJoin)', () => {
  it('keeps .. and absolute symlinks inside the directory', async () => {
    expect(await scopedJoin(root, '../../etc/passwd')).toBe(join(root, 'etc/passwd'));
    expect(await scopedJoin(root, '/syslog')).toBe(join(root, 'syslog'));
    expect(await scopedJoin(root, 'escape')).toBe(join(root, outside));
    expect(await scopedJoin(root, 'relative-escape')).toBe(join(root, 'secret'));
    expect(await scopedJoin(root, 'etc-link/passwd')).toBe(join(root, 'etc/passwd'));
    expect(await scopedJoin(root, 'nope/../syslog')).toBe(join(root, 'syslog'));
  });

  it('gives up on a symlink loop as securejoin does', async () => {
    await expect(scopedJoin(root, 'loop')).rejects.toThrow('too many levels of symbolic links');
  });

  it("states what os.Stat says about the joined path (the kubelet's file check)", async () => {
    expect(await goStatProblem(await scopedJoin(root, '/syslog'))).toBeUndefined();
    expect(await goStatProblem(await scopedJoin(root, 'escape'))).toBe(
      `stat ${join(root, outside)}: no such file or directory`,
    );
    expect(await goStatProblem(await scopedJoin(root, '/syslog/x'))).toBe(
      `stat ${join(root, 'syslog/x')}: not a directory`,
    );
  });
});

describe('openInside', () => {
  it('opens files and directories inside, through symlinks that stay inside', async () => {
    const f = await openInside(root, 'containers/p_ns_c-id.log');
    try {
      expect(f.stats.isFile()).toBe(true);
      expect(f.realPath).toBe(join(root, 'pods', 'ns_p_uid', 'c', '0.log'));
      expect((await f.handle.readFile()).toString()).toBe('pod log\n');
    } finally {
      await f.handle.close();
    }
    const d = await openInside(root, root);
    await d.handle.close();
    expect(d.stats.isDirectory()).toBe(true);
  });

  it('refuses what leads out (EACCES), says ENOENT for what is not there, and never waits on a FIFO', async () => {
    await expect(openInside(root, 'escape')).rejects.toMatchObject({ code: 'EACCES' });
    await expect(openInside(root, 'relative-escape')).rejects.toMatchObject({ code: 'EACCES' });
    await expect(openInside(root, join(root, 'etc-link', 'passwd'))).rejects.toMatchObject({ code: 'EACCES' });
    await expect(openInside(root, 'nope.log')).rejects.toMatchObject({
      code: 'ENOENT',
      message: `open ${join(root, 'nope.log')}: no such file or directory`,
    });
    await expect(openInside(root, 'fifo')).rejects.toMatchObject({ code: 'EACCES' });
  });
});

import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { nullLogger } from '../../../src/log/logger.js';
import { ContainerLogManager } from '../../../src/node/container-log-manager.js';
import type { RuntimeService } from '../../../src/cri/cri-types.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('log-rotation');

function manager(reopened: string[], clock: { t: number }) {
  const runtime = { reopenContainerLog: async (id: string) => void reopened.push(id) } as unknown as RuntimeService;
  return new ContainerLogManager({
    runtime,
    logger: nullLogger,
    maxSizeBytes: 100,
    maxFiles: 3,
    intervalMs: 10_000,
    now: () => new Date(clock.t),
  });
}

describe('container log rotation', () => {
  it('rotates past the size limit, asks the runtime to reopen, compresses and prunes old files', async () => {
    const dir = path.join(tmp, 'c1');
    fs.mkdirSync(dir);
    const log = path.join(dir, '0.log');
    const reopened: string[] = [];
    const clock = { t: Date.UTC(2026, 10, 29, 17, 0, 0) };
    const m = manager(reopened, clock);

    fs.writeFileSync(log, 'x'.repeat(50));
    expect(await m.rotateOne('c1', log)).toBe(false);
    expect(reopened).toEqual([]);

    for (let i = 0; i < 4; i++) {
      fs.writeFileSync(log, `round ${i} `.repeat(20));
      clock.t += 1000;
      expect(await m.rotateOne('c1', log)).toBe(true);
      fs.writeFileSync(log, ''); // the runtime reopened it
    }
    expect(reopened).toEqual(['c1', 'c1', 'c1', 'c1']);
    const files = fs.readdirSync(dir).sort();
    // live file + maxFiles-1 rotated ones; the newest rotated stays plain, older ones are gzipped
    expect(files).toEqual(['0.log', '0.log.20261129-170003.000.gz', '0.log.20261129-170004.000']);
    expect(gunzipSync(fs.readFileSync(path.join(dir, files[1]!))).toString()).toContain('round 2');
    expect(fs.readFileSync(path.join(dir, files[2]!), 'utf8')).toContain('round 3');
  });

  it('keeps the mode of the live log (0640, as the runtime writes it) through rotation and compression, whatever the umask', async () => {
    const dir = path.join(tmp, 'c3');
    fs.mkdirSync(dir);
    const log = path.join(dir, '0.log');
    const clock = { t: Date.UTC(2026, 10, 29, 18, 0, 0) };
    const m = manager([], clock);
    const umask = process.umask(0o002);
    try {
      for (let i = 0; i < 3; i++) {
        fs.writeFileSync(log, `round ${i} `.repeat(20), { mode: 0o640 });
        fs.chmodSync(log, 0o640);
        clock.t += 1000;
        expect(await m.rotateOne('c3', log)).toBe(true);
      }
    } finally {
      process.umask(umask);
    }
    const files = fs.readdirSync(dir).sort();
    expect(files.some((f) => f.endsWith('.gz'))).toBe(true);
    for (const f of files) expect([f, fs.statSync(path.join(dir, f)).mode & 0o777]).toEqual([f, 0o640]);
  });

  it('keeps the file in place when the runtime cannot reopen it', async () => {
    const dir = path.join(tmp, 'c2');
    fs.mkdirSync(dir);
    const log = path.join(dir, '0.log');
    fs.writeFileSync(log, 'y'.repeat(200));
    const runtime = {
      reopenContainerLog: async () => Promise.reject(new Error('not running')),
    } as unknown as RuntimeService;
    const m = new ContainerLogManager({
      runtime,
      logger: nullLogger,
      maxSizeBytes: 100,
      maxFiles: 3,
      intervalMs: 10_000,
    });
    await expect(m.rotateOne('c2', log)).rejects.toThrow('not running');
    expect(fs.readdirSync(dir)).toEqual(['0.log']);
  });
});

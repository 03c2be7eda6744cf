import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeContainer } from '../../../src/kuberuntime/runtime-pods.js';
import { readTerminationMessage, tailOfCriLog } from '../../../src/kuberuntime/termination-message.js';
import { useTmpDir } from '../../support/tmp.js';
import { exitedContainer } from './fixtures.js';

const tmp = useTmpDir('termination-message');

const exited = (over: Partial<RuntimeContainer>, policy = 'File'): RuntimeContainer => exitedContainer(over, policy);

describe('termination message', () => {
  it('joins partial CRI log lines and keeps the tail', () => {
    const log = [
      '2026-01-01T00:00:00Z stdout P hel',
      '2026-01-01T00:00:00Z stdout F lo',
      '2026-01-01T00:00:01Z stderr F boom',
      '',
    ].join('\n');
    expect(tailOfCriLog(log, 80, 2048)).toBe('hello\nboom\n');
    expect(tailOfCriLog(log, 1, 2048)).toBe('boom\n');
    expect(tailOfCriLog(log, 80, 3)).toBe('om\n');
  });

  it('reads the file, and falls back to the log tail only for a failed container under FallbackToLogsOnError', async () => {
    const msg = path.join(tmp, 'msg');
    const log = path.join(tmp, '0.log');
    fs.writeFileSync(log, '2026-01-01T00:00:00Z stderr F fatal: no quorum\n');
    fs.writeFileSync(msg, 'written by the app');
    expect(
      await readTerminationMessage(exited({ terminationMessageHostPath: msg, logPath: log }, 'FallbackToLogsOnError')),
    ).toBe('written by the app');
    fs.writeFileSync(msg, '');
    expect(
      await readTerminationMessage(exited({ terminationMessageHostPath: msg, logPath: log }, 'FallbackToLogsOnError')),
    ).toBe('fatal: no quorum\n');
    expect(await readTerminationMessage(exited({ terminationMessageHostPath: msg, logPath: log }, 'File'))).toBe('');
    expect(
      await readTerminationMessage(
        exited({ terminationMessageHostPath: msg, logPath: log, exitCode: 0 }, 'FallbackToLogsOnError'),
      ),
    ).toBe('');
    fs.writeFileSync(msg, 'x'.repeat(5000));
    expect((await readTerminationMessage(exited({ terminationMessageHostPath: msg }))).length).toBe(4096);
  });
});

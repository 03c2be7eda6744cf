// The JSON log format keeps the cause of a warning or info line, not only of an error line.
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';

describe('JSON log lines', () => {
  it('carry err on info and warning lines, and default it to msg on error lines', () => {
    const { logger, lines } = memoryLogger(2);
    logger.warn('Mirror pod watch failed', { err: 'watch too large', retryIn: '1000ms' });
    logger.v(2).info('Syncing failed', { err: 'timeout' });
    logger.error('Cannot start');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({
        msg: 'Mirror pod watch failed',
        err: 'watch too large',
        retryIn: '1000ms',
        severity: 'warning',
      }),
      expect.objectContaining({ msg: 'Syncing failed', err: 'timeout', v: 2 }),
      expect.objectContaining({ msg: 'Cannot start', err: 'Cannot start' }),
    ]);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';
import { guardProcess, unexpectedErrorCount } from '../../../src/process/unexpected-errors.js';

let unguard: (() => void) | undefined;
afterEach(() => unguard?.());

describe('guardProcess', () => {
  it('logs an unhandled rejection and an uncaught exception as bugs and counts them', () => {
    const { logger, lines } = memoryLogger();
    unguard = guardProcess(logger);
    const before = unexpectedErrorCount();
    // Emitted directly: a real one would also reach the test runner's own handlers.
    process.emit('unhandledRejection', new Error('boom in a stream handler'), Promise.resolve());
    (process.emit as (event: string, ...args: unknown[]) => boolean)(
      'uncaughtException',
      new Error('boom in a timer'),
      'uncaughtException',
    );
    expect(unexpectedErrorCount()).toBe(before + 2);
    expect(
      lines.some((l) => l.includes('BUG: unhandled promise rejection') && l.includes('boom in a stream handler')),
    ).toBe(true);
    expect(lines.some((l) => l.includes('BUG: uncaught exception') && l.includes('boom in a timer'))).toBe(true);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startMemoryReducer } from '../../../src/process/memory-reducer.js';

describe('memory reducer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('collects only while the young generation is grown, checking once per interval', () => {
    let size = 1 * 2 ** 20;
    const gc = vi.fn(() => {
      size = 1 * 2 ** 20; // a full collection shrinks it back
    });
    const reducer = startMemoryReducer({ intervalMs: 15_000, gc, youngGenerationBytes: () => size });
    vi.advanceTimersByTime(60_000);
    expect(gc).not.toHaveBeenCalled();
    size = 32 * 2 ** 20;
    vi.advanceTimersByTime(14_999);
    expect(gc).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(gc).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(60_000);
    expect(gc).toHaveBeenCalledTimes(1);
    reducer.stop();
    size = 32 * 2 ** 20;
    vi.advanceTimersByTime(60_000);
    expect(gc).toHaveBeenCalledTimes(1);
  });
});

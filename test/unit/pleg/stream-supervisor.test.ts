// Reconnecting a runtime event stream: never faster than the floor, backing off while streams die
// young (even ones that delivered an event first), and from the floor again after a long-lived one.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StreamSupervisor, type StreamCallbacks } from '../../../src/pleg/stream-supervisor.js';
import { Backoff, RECONNECT_BACKOFF } from '../../../src/util/backoff.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

function supervise(onOpen: (cb: StreamCallbacks, n: number) => void) {
  const opens: number[] = [];
  const retries: number[] = [];
  let current: StreamCallbacks | undefined;
  const s = new StreamSupervisor({
    open: (cb) => {
      opens.push(Date.now());
      current = cb;
      onOpen(cb, opens.length);
      return { cancel: () => cb.onEnd() };
    },
    confirmMs: 1000,
    backoff: new Backoff(RECONNECT_BACKOFF, { now: () => Date.now(), random: () => 0 }),
    onUp: () => {},
    onDown: (_reason, retryInMs) => retries.push(retryInMs),
    onUnsupported: () => {},
  });
  return {
    s,
    opens,
    retries,
    end: (message?: string) => current?.onEnd(message === undefined ? undefined : { unsupported: false, message }),
  };
}

describe('StreamSupervisor', () => {
  it('backs off a stream that delivers one event and dies, instead of reopening it at once', () => {
    // A proxy that closes every stream right after its first message.
    const { s, opens, retries } = supervise((cb) => {
      cb.onMessage();
      cb.onEnd();
    });
    s.start();
    vi.advanceTimersByTime(60_000);
    s.stop();
    expect(retries).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000]);
    // Opened at 0, 1, 3, 7, 15 and 31 s: six opens in a minute, not one every few milliseconds.
    expect(opens.length).toBe(6);
    for (let i = 1; i < opens.length; i++)
      expect(opens[i] - opens[i - 1]).toBeGreaterThanOrEqual(RECONNECT_BACKOFF.initialMs);
  });

  it('starts again from the floor after a stream that lived 30 s', () => {
    const { s, retries, end } = supervise(() => {});
    s.start();
    end('cut');
    vi.advanceTimersByTime(1000);
    end('cut');
    vi.advanceTimersByTime(2000);
    expect(retries).toEqual([1000, 2000]);
    // Open and up (confirmed after 1 s), then 30 s of life before the next break.
    vi.advanceTimersByTime(30_000);
    end('cut');
    expect(retries).toEqual([1000, 2000, 1000]);
    s.stop();
  });

  it('keeps backing off a stream that is confirmed up but dies before 30 s', () => {
    const { s, retries, end } = supervise(() => {});
    s.start();
    for (let i = 0; i < 4; i++) {
      vi.advanceTimersByTime(10_000); // up after 1 s, dies at 10 s
      end('cut');
      vi.advanceTimersByTime(retries[retries.length - 1]);
    }
    expect(retries).toEqual([1000, 2000, 4000, 8000]);
    s.stop();
  });
});

// The kubelet API's deferred start: at the first worker step, when adoption asks, or at the latest
// after its timeout; once only, never after stop, and never with enableServer: false.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deferKubeletApi, KUBELET_API_LATEST_MS } from '../../../src/cli/deferred-kubelet-api.js';
import { createLogger } from '../../../src/log/logger.js';
import type { RunningKubeletServer } from '../../../src/server/kubelet/kubelet-server.js';

const lines: string[] = [];
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: (s: string) => void lines.push(s) } });

function starter() {
  const closed: string[] = [];
  const start = vi.fn(async (): Promise<RunningKubeletServer> => ({
    url: 'https://0.0.0.0:10250',
    close: async () => void closed.push('closed'),
  }));
  return { start, closed };
}

beforeEach(() => {
  vi.useFakeTimers();
  lines.length = 0;
});
afterEach(() => vi.useRealTimers());

describe('deferKubeletApi', () => {
  it('starts once, at the first worker step, and closes what it started', async () => {
    const { start, closed } = starter();
    const api = deferKubeletApi({ enabled: true, start, logger });
    expect(start).not.toHaveBeenCalled();
    api.observer.podWorkerStep?.('uid', 'create', 1);
    api.observer.podWorkerStep?.('uid', 'create', 1);
    api.startNow();
    vi.advanceTimersByTime(KUBELET_API_LATEST_MS);
    expect(start).toHaveBeenCalledTimes(1);
    await api.close();
    expect(closed).toEqual(['closed']);
  });

  it('starts at the latest after its timeout when no pod gets going', () => {
    const { start } = starter();
    deferKubeletApi({ enabled: true, start, logger });
    vi.advanceTimersByTime(KUBELET_API_LATEST_MS - 1);
    expect(start).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(start).toHaveBeenCalledTimes(1);
  });

  it('never starts after stop: neither a worker step nor the timer', async () => {
    const { start } = starter();
    const api = deferKubeletApi({ enabled: true, start, logger });
    api.stop();
    api.observer.podWorkerStep?.('uid', 'create', 1);
    api.startNow();
    vi.advanceTimersByTime(KUBELET_API_LATEST_MS * 2);
    expect(start).not.toHaveBeenCalled();
    await api.close();
  });

  it('with enableServer: false says so and never starts', () => {
    const { start } = starter();
    const api = deferKubeletApi({ enabled: false, start, logger });
    api.startNow();
    vi.advanceTimersByTime(KUBELET_API_LATEST_MS);
    expect(start).not.toHaveBeenCalled();
    expect(lines.join('')).toContain('The kubelet API is off (enableServer: false)');
  });

  it('a failed start is logged, and closing it is a no-op', async () => {
    const api = deferKubeletApi({ enabled: true, start: () => Promise.reject(new Error('port 10250 taken')), logger });
    api.startNow();
    await api.close();
    expect(lines.join('')).toMatch(/Cannot start the kubelet API.*port 10250 taken/);
  });
});

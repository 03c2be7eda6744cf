import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import {
  BindError,
  BindPending,
  SupervisedListener,
  type BoundEndpoint,
} from '../../../src/server/supervised-listener.js';
import { waitFor } from '../../support/wait.js';

function capture(): { lines: Record<string, unknown>[]; logger: ReturnType<typeof createLogger> } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    logger: createLogger({
      format: 'json',
      verbosity: 0,
      sink: { write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) },
    }),
  };
}

const bound = (closed: string[]): BoundEndpoint => ({
  where: 'http://127.0.0.1:1',
  close: async () => void closed.push('closed'),
});

describe('SupervisedListener', () => {
  it('keeps retrying, logging a reason once and again only when it changes, then the success', async () => {
    const { lines, logger } = capture();
    const outcomes = ['taken', 'taken', 'taken', 'denied', 'denied', 'ok'];
    const closed: string[] = [];
    let attempts = 0;
    const l = new SupervisedListener(
      {
        what: 'healthz',
        fields: { address: '127.0.0.1:1' },
        bind: async () => {
          const o = outcomes[attempts++] ?? 'ok';
          if (o === 'ok') return bound(closed);
          if (o === 'denied') throw new TypeError('unexpected'); // not a BindError: still supervised
          throw new BindError(`port 1 is ${o}`);
        },
      },
      logger,
      { initialMs: 1, maxMs: 5 },
    );
    await l.start();
    expect(l.where).toBeUndefined();
    await waitFor(() => l.where, { timeoutMs: 10_000, what: 'the listener to bind' });
    expect(attempts).toBe(6);
    expect(lines.map((r) => [r.msg, r.err ?? r.at])).toEqual([
      ['Cannot serve healthz; the agent runs on and retries with back-off', 'port 1 is taken'],
      ['Cannot serve healthz; the agent runs on and retries with back-off', 'unexpected'],
      ['Serving healthz', 'http://127.0.0.1:1'],
    ]);
    expect(lines[0]).toMatchObject({ address: '127.0.0.1:1' });
    expect(lines[2]).toMatchObject({ afterFailedAttempts: 5 });
    await l.close();
    expect(closed).toEqual(['closed']);
  });

  it('waits for what is on its way (a certificate being made) without an error line, and binds when it comes', async () => {
    vi.useFakeTimers();
    try {
      const { lines, logger } = capture();
      let made!: () => void;
      const making = new Promise<void>((r) => (made = r));
      let ready = false;
      let attempts = 0;
      const l = new SupervisedListener(
        {
          what: 'the kubelet API',
          fields: { address: '0.0.0.0:10250' },
          bind: async () => {
            attempts++;
            if (!ready) throw new BindPending('no self-signed serving certificate: being generated', making);
            return bound([]);
          },
        },
        logger,
        // A back-off this short would retry hundreds of times in the second below, were it used.
        { initialMs: 1, maxMs: 1 },
      );
      await l.start();
      await vi.advanceTimersByTimeAsync(1_000);
      expect(attempts).toBe(1);
      ready = true;
      made();
      await vi.advanceTimersByTimeAsync(0);
      expect(l.where).toBe('http://127.0.0.1:1');
      expect(attempts).toBe(2);
      expect(lines.map((r) => r.msg)).toEqual(['Serving the kubelet API']);
      await l.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops retrying when closed', async () => {
    vi.useFakeTimers();
    try {
      const { logger } = capture();
      let attempts = 0;
      const l = new SupervisedListener(
        {
          what: 'healthz',
          fields: {},
          bind: async () => {
            attempts++;
            throw new BindError('taken');
          },
        },
        logger,
        { initialMs: 1_000, maxMs: 1_000 },
      );
      await l.start();
      await vi.advanceTimersByTimeAsync(1_500);
      expect(attempts).toBe(2);
      await l.close();
      await vi.advanceTimersByTimeAsync(60_000);
      expect(attempts).toBe(2);
      expect(l.where).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });
});

// An httpGet lifecycle hook reads the status and drops the connection: the body, endless or not, is not read.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RuntimeService } from '../../../src/cri/cri-types.js';
import { HookError, runLifecycleHook } from '../../../src/kuberuntime/lifecycle-hooks.js';
import { waitFor } from '../../support/wait.js';

let server: http.Server;
let port: number;
let endlessClosed = false;
let endlessBytes = 0;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/fail') return void res.writeHead(500).end('no');
    // 200 and a body that never ends, written as fast as the client reads it.
    res.writeHead(200);
    res.on('close', () => (endlessClosed = true));
    const piece = Buffer.alloc(64 * 1024, 'z');
    const pump = (): void => {
      while (!res.destroyed && res.write(piece)) endlessBytes += piece.length;
      if (!res.destroyed) res.once('drain', pump);
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const ctx = {
  runtime: {} as RuntimeService,
  containerId: 'c',
  container: { name: 'main' },
  podIP: '127.0.0.1',
  timeoutSeconds: 5,
};

describe('httpGet lifecycle hook', () => {
  it('succeeds on the status and drops the connection instead of draining an endless body', async () => {
    await runLifecycleHook(ctx, { httpGet: { port, path: '/endless' } });
    await waitFor(() => endlessClosed, { timeoutMs: 10_000, what: 'the hook to drop the connection' });
    expect(endlessBytes).toBeLessThan(64 * 1024 * 1024);
  });

  it('fails on a 5xx, naming the status', async () => {
    await expect(runLifecycleHook(ctx, { httpGet: { port, path: '/fail' } })).rejects.toThrow(HookError);
    await expect(runLifecycleHook(ctx, { httpGet: { port, path: '/fail' } })).rejects.toThrow(/returned status 500/);
  });
});

describe('a sleep hook', () => {
  it('of zero seconds (PodLifecycleSleepActionAllowZero, GA in 1.34) returns at once, with no timer to wait for', async () => {
    vi.useFakeTimers();
    try {
      let done = false;
      const run = runLifecycleHook({ ...ctx, timeoutSeconds: 30 }, { sleep: { seconds: 0 } }).then(() => (done = true));
      await run;
      expect(done).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
      // One of a second waits for its timer.
      let slept = false;
      const one = runLifecycleHook({ ...ctx, timeoutSeconds: 30 }, { sleep: { seconds: 1 } }).then(
        () => (slept = true),
      );
      await Promise.resolve();
      expect(slept).toBe(false);
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(1000);
      await one;
      expect(slept).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, TransportError } from '../../../src/apiserver/api-error.js';
import type { RequestOptions } from '../../../src/apiserver/client.js';
import { Connectivity, type ProbeClient } from '../../../src/apiserver/connectivity.js';
import { nullLogger } from '../../../src/log/logger.js';

/** The API server as the probe finds it: not listening, listening but not ready, or ready. */
class FakeServer implements ProbeClient {
  readonly server = 'https://10.0.0.1:6443';
  state: 'absent' | 'not-ready' | 'ready' | 'hung' = 'absent';
  readonly probes: { at: number; opts: RequestOptions }[] = [];
  inFlight = 0;
  maxInFlight = 0;
  private observer: (e?: unknown) => void = () => {};
  private release: (() => void) | undefined;

  observe(fn: (e?: unknown) => void): void {
    this.observer = fn;
  }

  async request<T>(_method: string, _path: string, opts: RequestOptions = {}): Promise<T> {
    this.probes.push({ at: Date.now(), opts });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.state === 'hung') await new Promise<void>((r) => (this.release = r));
      const err =
        this.state === 'absent' || this.state === 'hung'
          ? new TransportError('refused', 'connect ECONNREFUSED')
          : this.state === 'not-ready'
            ? new ApiError(500, '', '[-]poststarthook/rbac/bootstrap-roles failed: not finished')
            : undefined;
      this.observer(err);
      if (err) throw err;
      return undefined as T;
    } finally {
      this.inFlight--;
    }
  }

  /** Why the requests in flight were given up, once per call. */
  readonly abandoned: string[] = [];
  abandonInFlight(why: string): void {
    this.abandoned.push(why);
  }

  unhang(): void {
    this.release?.();
  }

  /** The pauses between one probe and the next, from the `from`-th on. */
  gaps(from = 0): number[] {
    const at = this.probes.slice(from).map((p) => p.at);
    return at.slice(1).map((t, i) => t - at[i]!);
  }
}

describe('Connectivity', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function down(): { api: FakeServer; conn: Connectivity; woken: () => number } {
    const api = new FakeServer();
    const conn = new Connectivity(api, nullLogger);
    let wakes = 0;
    conn.onUp(() => wakes++);
    conn.report(new TransportError('refused', 'connect ECONNREFUSED'));
    expect(conn.usable).toBe(false);
    return { api, conn, woken: () => wakes };
  }

  it('asks an absent server every 200–250 ms, however long it stays away (no growing back-off)', async () => {
    const { api, conn } = down();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    const gaps = api.gaps();
    expect(gaps.length).toBeGreaterThan(2400); // 10 min at ≤ 250 ms
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(200);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(250);
    expect(api.maxInFlight).toBe(1);
    // On a connection of its own: never queued behind requests stuck on a dead server.
    expect(api.probes.every((p) => p.opts.ownConnection === true)).toBe(true);
    conn.stop();
  });

  it('notices a returning server within 250 ms and wakes every worker once', async () => {
    const { api, conn, woken } = down();
    await vi.advanceTimersByTimeAsync(30_000);
    // The worst moment: the server is back just after a probe found it absent.
    const seen = api.probes.length;
    while (api.probes.length === seen) await vi.advanceTimersByTimeAsync(1);
    api.state = 'ready';
    await vi.advanceTimersByTimeAsync(250);
    expect(conn.current).toBe('up');
    expect(woken()).toBe(1);
    const n = api.probes.length;
    await vi.advanceTimersByTimeAsync(5000);
    expect(api.probes.length).toBe(n); // no probing while up
    conn.stop();
  });

  it('keeps a server that listens but is not ready (/readyz 500) down, and takes it once ready', async () => {
    const { api, conn, woken } = down();
    api.state = 'not-ready';
    await vi.advanceTimersByTimeAsync(5000);
    expect(conn.usable).toBe(false);
    expect(woken()).toBe(0);
    expect(Math.max(...api.gaps())).toBeLessThanOrEqual(250);
    api.state = 'ready';
    await vi.advanceTimersByTimeAsync(250);
    expect(conn.usable).toBe(true);
    expect(woken()).toBe(1);
    conn.stop();
  });

  it('gives up the requests in flight when one got no answer at all, not when the server refused or answered', async () => {
    const { api, conn } = down();
    expect(api.abandoned).toEqual([]); // refused: nothing can be stuck on it
    api.state = 'ready';
    await vi.advanceTimersByTimeAsync(250);
    expect(conn.current).toBe('up');
    conn.report(new ApiError(503, 'ServiceUnavailable', 'etcd is down'));
    expect(api.abandoned).toEqual([]);
    api.state = 'ready';
    await vi.advanceTimersByTimeAsync(250);
    expect(conn.current).toBe('up');
    conn.report(new TransportError('timeout', 'PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n: no answer within 10000 ms'));
    expect(api.abandoned).toHaveLength(1);
    // Said once per outage: more timeouts while down do not give up the requests sent since.
    conn.report(new TransportError('timeout', 'GET /api/v1/nodes/n: no answer within 10000 ms'));
    expect(api.abandoned).toHaveLength(1);
    conn.stop();
  });

  it('honours Retry-After before the next probe', async () => {
    const api = new FakeServer();
    const conn = new Connectivity(api, nullLogger);
    conn.report(new ApiError(429, 'TooManyRequests', 'slow down', 3));
    await vi.advanceTimersByTimeAsync(2900);
    expect(api.probes).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(200);
    expect(api.probes).toHaveLength(1);
    conn.stop();
  });

  it('runs one probe at a time: a hung probe is not piled on', async () => {
    const { api, conn } = down();
    api.state = 'hung';
    await vi.advanceTimersByTimeAsync(3000);
    expect(api.probes).toHaveLength(1);
    api.unhang(); // it ends (as a failure); the next probe follows at the interval
    await vi.advanceTimersByTimeAsync(0);
    expect(conn.usable).toBe(false);
    api.state = 'ready';
    await vi.advanceTimersByTimeAsync(250);
    expect(api.probes).toHaveLength(2);
    expect(conn.current).toBe('up');
    conn.stop();
  });
});

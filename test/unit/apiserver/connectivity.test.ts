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
  private releases: (() => void)[] = [];

  observe(fn: (e?: unknown) => void): void {
    this.observer = fn;
  }

  async request<T>(_method: string, _path: string, opts: RequestOptions = {}): Promise<T> {
    this.probes.push({ at: Date.now(), opts });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      // A hung server answers nothing: the request ends at its own deadline, as the client's do.
      let timedOut = false;
      if (this.state === 'hung') {
        await new Promise<void>((r) => {
          this.releases.push(r);
          if (opts.timeoutMs !== undefined)
            setTimeout(() => {
              timedOut = true;
              r();
            }, opts.timeoutMs);
        });
      }
      const err = timedOut
        ? new TransportError('timeout', 'GET /readyz: no answer')
        : this.state === 'absent' || this.state === 'hung'
          ? new TransportError('refused', 'connect ECONNREFUSED')
          : this.state === 'not-ready'
            ? new ApiError(500, '', '[-]poststarthook/rbac/bootstrap-roles failed: not finished')
            : undefined;
      if (!opts.unobserved) this.observer(err);
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
    for (const r of this.releases.splice(0)) r();
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
    // One at a time, over the client's one connection: none asks for a fresh one.
    expect(api.probes.every((p) => p.opts.freshConnection === false)).toBe(true);
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

  it('gives a hung probe company once a second, never more than 5 in flight (each waits out its 5 s), and none while a probe is fresh', async () => {
    const { api, conn } = down();
    api.state = 'hung';
    await vi.advanceTimersByTimeAsync(900);
    expect(api.probes).toHaveLength(1); // under a second old: nobody else goes
    await vi.advanceTimersByTimeAsync(60_000);
    expect(api.maxInFlight).toBe(5);
    // Each probe ends at its 5 s deadline: about one new probe per second, none piled on.
    const gaps = api.gaps(1);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000);
    expect(api.probes.length).toBeLessThanOrEqual(51);
    // Each one sent while another was unanswered opens a fresh connection: the old may be dead.
    expect(api.probes[0]!.opts.freshConnection).toBe(false);
    expect(api.probes.slice(1).every((p) => p.opts.freshConnection === true)).toBe(true);
    expect(conn.usable).toBe(false);
    conn.stop();
  });

  it('sees a server that stops hanging within 1.3 s, while older probes still hang', async () => {
    const { api, conn, woken } = down();
    api.state = 'hung';
    await vi.advanceTimersByTimeAsync(30_000);
    // The worst moment: just after a probe went out into the hang.
    const seen = api.probes.length;
    while (api.probes.length === seen) await vi.advanceTimersByTimeAsync(1);
    api.state = 'ready'; // requests already sent stay unanswered until their deadline
    await vi.advanceTimersByTimeAsync(1300);
    expect(conn.current).toBe('up');
    expect(woken()).toBe(1);
    // The older probes' timeouts, later, do not take it down again.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(conn.current).toBe('up');
    expect(woken()).toBe(1);
    conn.stop();
  });
});

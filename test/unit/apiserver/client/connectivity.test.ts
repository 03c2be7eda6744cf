import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, TransportError } from '../../../../src/apiserver/client/api-error.js';
import type { RequestOptions } from '../../../../src/apiserver/client/client.js';
import { Connectivity, type ProbeClient } from '../../../../src/apiserver/client/connectivity.js';
import { nullLogger } from '../../../../src/log/logger.js';

/** The API server as the probe finds it: not listening, listening but not ready, or ready. */
class FakeServer implements ProbeClient {
  readonly server = 'https://10.0.0.1:6443';
  state: 'absent' | 'not-ready' | 'ready' | 'hung' = 'absent';
  /** A hung server that does not even finish TLS handshakes: no connection ever opens. */
  handshakesHang = false;
  readonly probes: { at: number; opts: RequestOptions; handshake: boolean }[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** A connection is open (the client's needsHandshake is false). */
  private connected = false;
  private observer: (e?: unknown) => void = () => {};
  private releases: (() => void)[] = [];

  observe(fn: (e?: unknown) => void): void {
    this.observer = fn;
  }

  get needsHandshake(): boolean {
    return !this.connected;
  }

  /** The probes that opened a new connection. */
  handshakes(): { at: number; opts: RequestOptions; handshake: boolean }[] {
    return this.probes.filter((p) => p.handshake);
  }

  async request<T>(_method: string, _path: string, opts: RequestOptions = {}): Promise<T> {
    const handshake = opts.freshConnection === true || !this.connected;
    this.probes.push({ at: Date.now(), opts, handshake });
    this.connected = this.state !== 'absent' && !this.handshakesHang;
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
    conn.report(
      new TransportError(
        'timeout',
        'PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n: no answer within 10000 ms',
      ),
    );
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

  it('gives a hung probe company once a second on the open connection, never more than 5 in flight, and a fresh connection only on a back-off (2, 4, 8, then 16–20 s)', async () => {
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
    // The first opened the connection; the others went over it, but for a fresh one now and then.
    const handshakes = api.handshakes();
    expect(handshakes[0]).toBe(api.probes[0]);
    expect(handshakes.slice(1).every((p) => p.opts.freshConnection === true)).toBe(true);
    const apart = handshakes.slice(1).map((p, i) => p.at - handshakes[i]!.at);
    expect(apart[0]).toBeGreaterThanOrEqual(2000);
    for (let i = 1; i < apart.length; i++) expect(apart[i]!).toBeGreaterThanOrEqual(Math.min(16_000, 2000 * 2 ** i));
    expect(Math.max(...apart)).toBeLessThanOrEqual(21_000);
    // 60 s hung: at most 2 + 4 + 8 + 16 + 16 + 16 s between 7 handshakes.
    expect(handshakes.length).toBeLessThanOrEqual(7);
    expect(conn.usable).toBe(false);
    conn.stop();
  });

  it('a server whose TLS handshakes hang too: one handshake at a time (each probe waits for it), on the same back-off', async () => {
    const { api, conn } = down();
    api.state = 'hung';
    api.handshakesHang = true;
    await vi.advanceTimersByTimeAsync(60_000);
    const handshakes = api.handshakes();
    const apart = handshakes.slice(1).map((p, i) => p.at - handshakes[i]!.at);
    for (let i = 0; i < apart.length; i++) expect(apart[i]!).toBeGreaterThanOrEqual(Math.min(16_000, 2000 * 2 ** i));
    expect(handshakes.length).toBeLessThanOrEqual(7);
    // Nothing but handshakes: no probe goes without a connection to go over.
    expect(handshakes).toHaveLength(api.probes.length);
    conn.stop();
  });

  it('an answer ends the back-off: the next hang starts again from 2 s', async () => {
    const { api, conn } = down();
    api.state = 'hung';
    await vi.advanceTimersByTimeAsync(40_000);
    api.state = 'not-ready'; // answered (500), so not hung
    api.unhang();
    await vi.advanceTimersByTimeAsync(2000);
    const from = api.probes.length;
    api.state = 'hung';
    await vi.advanceTimersByTimeAsync(10_000);
    const fresh = api.probes.slice(from).filter((p) => p.opts.freshConnection === true);
    expect(fresh.length).toBeGreaterThanOrEqual(2); // ~2 s and ~6 s into the hang
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

import type { PodList } from 'kubernetes-types/core/v1';
import * as net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { startEndpoints, type RunningEndpoints } from '../../../src/server/endpoints.js';
import { freePorts } from '../../support/ports.js';
import { T0 } from '../status/fixtures.js';
import { FakeSource, pendingEntry, runningEntry } from './fake-source.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const running: RunningEndpoints[] = [];

async function start(source: FakeSource, o: { healthzPort?: number; readOnlyPort?: number } = {}): Promise<RunningEndpoints & { ports: number[] }> {
  const ports = await freePorts(2);
  const e = await startEndpoints({
    healthzBindAddress: '127.0.0.1',
    healthzPort: o.healthzPort ?? ports[0]!,
    address: '127.0.0.1',
    readOnlyPort: o.readOnlyPort ?? ports[1]!,
    syncFrequencyMs: 60_000,
    source,
    logger,
    now: () => T0 + 120_000,
  });
  running.push(e);
  return Object.assign(e, { ports });
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

async function get(url: string): Promise<{ status: number; type: string | null; body: string }> {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
}

describe('local HTTP endpoints', () => {
  it('answers /healthz with ok on both ports while the PLEG relists', async () => {
    const e = await start(new FakeSource());
    expect(await get(`${e.healthzURL}/healthz`)).toMatchObject({ status: 200, body: 'ok' });
    expect(await get(`${e.readOnlyURL}/healthz`)).toMatchObject({ status: 200, body: 'ok' });
    expect((await get(`${e.healthzURL}/healthz?verbose`)).body).toBe('[+]ping ok\n[+]syncloop ok\nhealthz check passed\n');
    expect((await get(`${e.healthzURL}/pods`)).status).toBe(404); // the healthz port serves nothing else
  });

  it('fails syncloop after max(2 x syncFrequency, 5m) without a relist', async () => {
    const source = new FakeSource();
    const e = await start(source);
    source.relistAgoMs = 5 * 60_000;
    expect((await get(`${e.healthzURL}/healthz`)).status).toBe(200);
    source.relistAgoMs = 6 * 60_000;
    const r = await get(`${e.healthzURL}/healthz`);
    expect(r.status).toBe(500);
    expect(r.body).toBe('[+]ping ok\n[-]syncloop failed: sync Loop took longer than expected: no relist for 6m (limit 5m)\nhealthz check failed\n');
    expect((await get(`${e.healthzURL}/healthz/ping`)).status).toBe(200);
    expect((await get(`${e.healthzURL}/healthz/syncloop`)).status).toBe(500);
  });

  it('serves /pods as a v1 PodList with current statuses', async () => {
    const source = new FakeSource();
    source.entries = [pendingEntry(), runningEntry()];
    const e = await start(source);
    const r = await get(`${e.readOnlyURL}/pods`);
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/json');
    const list = JSON.parse(r.body) as PodList;
    expect(list).toMatchObject({ kind: 'PodList', apiVersion: 'v1' });
    expect(list.items.map((p) => [p.metadata?.name, p.status?.phase])).toEqual([
      ['etcd-node1', 'Pending'],
      ['web-node1', 'Running'],
    ]);
    expect(list.items[0]?.metadata?.deletionTimestamp).toBe('2025-01-01T10:00:30Z');
    expect(list.items[1]?.metadata?.deletionTimestamp).toBeUndefined();
    expect(list.items[1]?.status?.containerStatuses?.[0]?.containerID).toBe('containerd://c1');
  });

  it('serves kubelet-named metrics in the Prometheus text format', async () => {
    const source = new FakeSource();
    source.entries = [runningEntry(), pendingEntry()];
    source.relistAgoMs = 2_000;
    const e = await start(source);
    const r = await get(`${e.readOnlyURL}/metrics`);
    expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(r.body).toContain('# TYPE kubelet_running_pods gauge\nkubelet_running_pods 1\n');
    expect(r.body).toContain('kubelet_running_containers{container_state="running"} 1\n');
    expect(r.body).toContain('kubelet_running_containers{container_state="exited"} 1\n');
    expect(r.body).toContain('kubelet_running_containers{container_state="created"} 0\n');
    expect(r.body).toContain(`kubelet_pleg_last_seen_seconds ${(T0 + 118_000) / 1000}\n`);
  });

  it('refuses anything but GET', async () => {
    const e = await start(new FakeSource());
    expect((await fetch(`${e.readOnlyURL}/pods`, { method: 'POST' })).status).toBe(405);
  });

  it('disables a port set to 0', async () => {
    const e = await start(new FakeSource(), { readOnlyPort: 0 });
    expect(e.readOnlyURL).toBeUndefined();
    expect(e.healthzURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('fails to start with one clear error when a port is taken, and leaves nothing listening', async () => {
    const [busy, other] = await freePorts(2);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(busy, '127.0.0.1', r));
    try {
      await expect(start(new FakeSource(), { readOnlyPort: other!, healthzPort: busy! })).rejects.toThrow(
        `cannot serve healthz (--healthz-port) on 127.0.0.1:${busy}: the address is already in use (is another kubelet or bootlet running?)`,
      );
      // The read-only server that did start was closed again.
      await expect(new Promise((resolve, reject) => net.connect(other!, '127.0.0.1').once('connect', resolve).once('error', reject))).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      blocker.close();
    }
  });
});

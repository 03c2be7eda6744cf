import type { PodList } from 'kubernetes-types/core/v1';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { startEndpoints, type RunningEndpoints } from '../../../src/server/endpoints.js';
import { freePorts } from '../../support/ports.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { T0 } from '../status/fixtures.js';
import { FakeSource, pendingEntry, runningEntry } from './fake-source.js';

const tmp = useTmpDir('endpoints');
const logLines: Record<string, unknown>[] = [];
const logger = createLogger({
  format: 'json',
  verbosity: 0,
  sink: { write: (l) => logLines.push(JSON.parse(l) as Record<string, unknown>) },
});
const running: RunningEndpoints[] = [];
let dirs = 0;

async function start(
  source: FakeSource,
  o: { healthzPort?: number; readOnlyPort?: number } = {},
): Promise<RunningEndpoints & { ports: number[] }> {
  const ports = await freePorts(2);
  const e = await startEndpoints({
    healthzBindAddress: '127.0.0.1',
    healthzPort: o.healthzPort ?? ports[0]!,
    address: '127.0.0.1',
    readOnlyPort: o.readOnlyPort ?? ports[1]!,
    rootDir: path.join(tmp, `root${dirs++}`),
    syncFrequencyMs: 60_000,
    source,
    logger,
    now: () => T0 + 120_000,
    retry: { initialMs: 20, maxMs: 100 },
  });
  running.push(e);
  return Object.assign(e, { ports });
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
  logLines.length = 0;
});

/** A GET with a Host header of our choosing (fetch sets its own). */
function getWithHost(
  url: string,
  host: string | undefined,
  httpVersion11 = true,
): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => {
      const hostLine = host === undefined ? '' : `Host: ${host}\r\n`;
      sock.write(`GET ${u.pathname} HTTP/${httpVersion11 ? '1.1' : '1.0'}\r\n${hostLine}Connection: close\r\n\r\n`);
    });
    let raw = '';
    sock.on('data', (c: Buffer) => (raw += c.toString()));
    sock.on('end', () => {
      const status = Number(/^HTTP\/1\.\d (\d{3})/.exec(raw)?.[1] ?? 0);
      resolve({ status, body: raw.slice(raw.indexOf('\r\n\r\n') + 4) });
    });
    sock.on('error', reject);
  });
}

function getOverSocket(socketPath: string, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ socketPath, path: p, headers: { Host: 'anything.example' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

async function get(url: string): Promise<{ status: number; type: string | null; body: string }> {
  const r = await fetch(url);
  return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
}

describe('local HTTP endpoints', () => {
  it('answers /healthz with ok on both ports while the PLEG relists', async () => {
    const e = await start(new FakeSource());
    expect(await get(`${e.healthzURL}/healthz`)).toMatchObject({ status: 200, body: 'ok' });
    expect(await get(`${e.readOnlyURL}/healthz`)).toMatchObject({ status: 200, body: 'ok' });
    expect((await get(`${e.healthzURL}/healthz?verbose`)).body).toBe(
      '[+]ping ok\n[+]syncloop ok\nhealthz check passed\n',
    );
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
    expect(r.body).toBe(
      '[+]ping ok\n[-]syncloop failed: sync Loop took longer than expected: no relist for 6m (limit 5m)\nhealthz check failed\n',
    );
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

  it('keeps going when a port is taken: one error line naming the port and the setting, then binds once it is free', async () => {
    const [busy, other] = await freePorts(2);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(busy, '127.0.0.1', r));
    let e: RunningEndpoints;
    try {
      e = await start(new FakeSource(), { readOnlyPort: other!, healthzPort: busy! });
      expect(e.healthzURL).toBeUndefined();
      expect((await get(`${e.readOnlyURL}/healthz`)).status).toBe(200); // the others serve meanwhile
      expect(e.podsSocket).toBeDefined();
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
    await waitFor(() => e.healthzURL, { timeoutMs: 30_000, what: 'healthz to bind once the port is free' });
    expect((await get(`${e.healthzURL}/healthz`)).body).toBe('ok');
    // Retries failing for the same reason are not logged again (supervised-listener.test.ts).
    const errors = logLines.filter((r) => r.err !== undefined);
    expect(errors).toEqual([
      expect.objectContaining({
        msg: 'Cannot serve healthz; the agent runs on and retries with back-off',
        address: `127.0.0.1:${busy}`,
        err: `port ${busy} is already in use by another process (another kubelet or bootlet?); stop it or choose another with --healthz-port (healthzPort in the config file)`,
      }),
    ]);
    expect(logLines.find((r) => r.msg === 'Serving healthz')).toMatchObject({
      at: `http://127.0.0.1:${busy}`,
      afterFailedAttempts: expect.any(Number),
    });
  });

  it('names --read-only-port and readOnlyPort when that port is taken', async () => {
    const [busy] = await freePorts(1);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(busy, '127.0.0.1', r));
    try {
      const e = await start(new FakeSource(), { readOnlyPort: busy! });
      expect(e.readOnlyURL).toBeUndefined();
      expect(logLines.find((r) => r.err !== undefined)?.err).toContain(
        'choose another with --read-only-port (readOnlyPort in the config file)',
      );
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });

  it('answers only requests whose Host is a loopback name or address, and logs refusals once', async () => {
    const source = new FakeSource();
    source.entries = [runningEntry()];
    const e = await start(source);
    for (const url of [`${e.healthzURL}/healthz`, `${e.readOnlyURL}/pods`, `${e.readOnlyURL}/healthz`]) {
      const port = new URL(url).port;
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
        expect((await getWithHost(url, host)).status, `${url} Host ${host}`).toBe(200);
      }
      for (const host of [`rebind.evil.example:${port}`, 'evil.example', `10.1.2.3:${port}`]) {
        const r = await getWithHost(url, host);
        expect(r.status, `${url} Host ${host}`).toBe(403);
        expect(r.body).not.toContain('web-node1');
      }
      expect((await getWithHost(url, undefined, false)).status, 'HTTP/1.0 without Host').toBe(200);
      expect((await getWithHost(url, undefined, true)).status, 'HTTP/1.1 without Host').toBe(400);
    }
    const refusals = logLines.filter((r) => r.severity === 'warning');
    expect(refusals.map((r) => r.endpoint).sort()).toEqual(['healthz', 'read-only port']);
  });

  it('serves /pods and /healthz on the unix socket, whatever the Host', async () => {
    const source = new FakeSource();
    source.entries = [runningEntry()];
    const e = await start(source, { readOnlyPort: 0 });
    expect(e.readOnlyURL).toBeUndefined();
    const r = await getOverSocket(e.podsSocket!, '/pods');
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body) as PodList).items[0]?.metadata?.name).toBe('web-node1');
    expect(await getOverSocket(e.podsSocket!, '/healthz')).toEqual({ status: 200, body: 'ok' });
  });
});

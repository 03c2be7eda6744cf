// The volume manager: a PodObjects change rewrites the pods' volumes in place; a failing rewrite
// is logged once and retried with back-off; a forgotten pod is left alone.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Volume } from 'kubernetes-types/core/v1';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';
import { VolumeManager } from '../../../src/node/volume-manager.js';
import { FakePodObjects } from '../../support/fake-pod-objects.js';
import { unmountAllUnder } from '../../support/mounts.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { pod, type TestPod } from '../kuberuntime/fixtures.js';

const tmp = useTmpDir('volume-manager');
const rootDir = path.join(tmp, 'root');
afterAll(() => unmountAllUnder(tmp));
const NS = 'kube-system';
const NODE = { cpuMillis: 1000, memoryBytes: 1 << 30, ephemeralStorageBytes: 0 };

let serial = 0;
function testPod(volumes: Volume[]): TestPod {
  const p = pod({ spec: { volumes, containers: [{ name: 'app' }] } });
  p.metadata.uid = `volmgr${String(serial++).padStart(4, '0')}`.padEnd(32, '0');
  return p;
}

function setup() {
  const objects = new FakePodObjects();
  const { logger, lines } = memoryLogger();
  // A floor of 10 ms, so a retry comes soon; nothing here asserts on time.
  const manager = new VolumeManager({
    podObjects: objects,
    logger,
    node: NODE,
    backoff: { initialMs: 10, maxMs: 40, jitter: 0, resetAfterMs: 0 },
  });
  return { objects, lines, manager };
}

const records = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('VolumeManager', () => {
  it('rewrites a configMap volume in place on a change, through the same directory', async () => {
    const { objects, manager } = setup();
    objects.setConfigMap(NS, 'cfg', { 'a.conf': 'one' });
    const p = testPod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    const dir = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    expect(fs.readFileSync(path.join(dir, 'a.conf'), 'utf8')).toBe('one');
    const first = fs.readlinkSync(path.join(dir, '..data'));
    objects.setConfigMap(NS, 'cfg', { 'a.conf': 'two', 'b.conf': 'new' });
    objects.changed(NS);
    await manager.idle();
    expect(fs.readFileSync(path.join(dir, 'a.conf'), 'utf8')).toBe('two');
    expect(fs.readFileSync(path.join(dir, 'b.conf'), 'utf8')).toBe('new');
    expect(fs.readlinkSync(path.join(dir, '..data'))).not.toBe(first);
  });

  it("rewrites downwardAPI files (and a projected downwardAPI source) when only the pod's labels or annotations change", async () => {
    const { manager } = setup();
    const p = testPod([
      {
        name: 'info',
        downwardAPI: {
          items: [
            { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
            { path: 'ann', fieldRef: { fieldPath: "metadata.annotations['note']" } },
          ],
        },
      },
      {
        name: 'proj',
        projected: {
          sources: [{ downwardAPI: { items: [{ path: 'tier', fieldRef: { fieldPath: "metadata.labels['tier']" } }] } }],
        },
      },
    ]);
    p.metadata.labels = { tier: 'a' };
    p.metadata.annotations = { note: 'one' };
    const info = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    const proj = await manager.setUp(p, p.spec!.volumes![1]!, rootDir);
    expect(fs.readFileSync(path.join(info, 'labels'), 'utf8')).toBe('tier="a"');
    const first = fs.readlinkSync(path.join(info, '..data'));
    // The desired set's next version of the same pod (same UID): only the metadata differs.
    manager.podUpdated({
      ...p,
      metadata: { ...p.metadata, labels: { tier: 'b', extra: 'x' }, annotations: { note: 'two' } },
    });
    await manager.idle();
    expect(fs.readFileSync(path.join(info, 'labels'), 'utf8')).toBe('extra="x"\ntier="b"');
    expect(fs.readFileSync(path.join(info, 'ann'), 'utf8')).toBe('two');
    expect(fs.readFileSync(path.join(proj, 'tier'), 'utf8')).toBe('b');
    expect(fs.readlinkSync(path.join(info, '..data'))).not.toBe(first);
  });

  it('a pod update that leaves labels and annotations as they were rewrites nothing', async () => {
    const { manager } = setup();
    const p = testPod([
      { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
    ]);
    p.metadata.labels = { tier: 'a' };
    const dir = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    const first = fs.readlinkSync(path.join(dir, '..data'));
    manager.podUpdated({ ...p, metadata: { ...p.metadata, labels: { tier: 'a' } } });
    await manager.idle();
    expect(fs.readlinkSync(path.join(dir, '..data'))).toBe(first);
  });

  it('a change that leaves the content as it was writes nothing', async () => {
    const { objects, manager } = setup();
    objects.setConfigMap(NS, 'cfg', { a: '1' });
    const p = testPod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    const dir = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    const first = fs.readlinkSync(path.join(dir, '..data'));
    objects.changed(NS);
    await manager.idle();
    expect(fs.readlinkSync(path.join(dir, '..data'))).toBe(first);
  });

  it('rewrites a renewed token and the secret of a projected volume', async () => {
    const { objects, manager } = setup();
    objects.setSecret(NS, 's', { k: 'v1' });
    const p = testPod([
      { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 'token' } }, { secret: { name: 's' } }] } },
    ]);
    const dir = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    expect(fs.readFileSync(path.join(dir, 'token'), 'utf8')).toBe('token-default--3600-0');
    objects.tokenSerial = 1;
    objects.setSecret(NS, 's', { k: 'v2' });
    objects.changed(NS);
    await manager.idle();
    expect(fs.readFileSync(path.join(dir, 'token'), 'utf8')).toBe('token-default--3600-1');
    expect(fs.readFileSync(path.join(dir, 'k'), 'utf8')).toBe('v2');
  });

  it('a failing rewrite: logged once per pod and volume, retried with back-off, the old files kept until it works', async () => {
    const { objects, manager, lines } = setup();
    objects.setConfigMap(NS, 'cfg', { a: '1' });
    const p = testPod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    const dir = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    objects.configMaps.delete(`${NS}/cfg`);
    objects.changed(NS);
    // Several retries happen; each asks PodObjects again.
    let asked = 0;
    const get = objects.getConfigMap.bind(objects);
    objects.getConfigMap = async (ns, name) => {
      asked++;
      return get(ns, name);
    };
    await waitFor(() => asked >= 3, { timeoutMs: 10_000, what: 'three retries of the rewrite' });
    const warns = records(lines).filter((r) => r.msg === 'Volume update failed; retrying with back-off');
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({
      volume: 'cfg',
      podUID: p.metadata.uid,
      err: 'MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found',
    });
    expect(fs.readFileSync(path.join(dir, 'a'), 'utf8')).toBe('1');
    objects.setConfigMap(NS, 'cfg', { a: '2' });
    await waitFor(() => fs.readFileSync(path.join(dir, 'a'), 'utf8') === '2', {
      timeoutMs: 10_000,
      what: 'the retry to write the object back',
    });
    await waitFor(() => records(lines).some((r) => r.msg === 'Volume updated again after failures'), {
      timeoutMs: 10_000,
      what: 'the recovery line',
    });
    manager.forgetPod(p.metadata.uid);
  });

  it('an unavailable server is logged, never thrown', async () => {
    const { objects, manager, lines } = setup();
    objects.setConfigMap(NS, 'cfg', { a: '1' });
    const p = testPod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    objects.unavailable = true;
    objects.changed(NS);
    await manager.idle();
    expect(records(lines).some((r) => typeof r.err === 'string' && r.err.includes('not reachable'))).toBe(true);
    objects.unavailable = false;
    manager.forgetPod(p.metadata.uid);
  });

  it('a forgotten pod is unregistered and never written again', async () => {
    const { objects, manager } = setup();
    objects.setConfigMap(NS, 'cfg', { a: '1' });
    const p = testPod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    const dir = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    expect(objects.registered.has(p.metadata.uid)).toBe(true);
    manager.forgetPod(p.metadata.uid);
    expect(objects.unregistered).toEqual([p.metadata.uid]);
    objects.setConfigMap(NS, 'cfg', { a: '2' });
    objects.changed(NS);
    await manager.idle();
    expect(fs.readFileSync(path.join(dir, 'a'), 'utf8')).toBe('1');
  });

  it('a rewrite never recreates a volume directory that was removed', async () => {
    const { objects, manager } = setup();
    objects.setConfigMap(NS, 'cfg', { a: '1' });
    const p = testPod([{ name: 'cfg', configMap: { name: 'cfg' } }]);
    const dir = await manager.setUp(p, p.spec!.volumes![0]!, rootDir);
    fs.rmSync(dir, { recursive: true });
    objects.setConfigMap(NS, 'cfg', { a: '2' });
    objects.changed(NS);
    await manager.idle();
    expect(fs.existsSync(dir)).toBe(false);
    manager.forgetPod(p.metadata.uid);
  });
});

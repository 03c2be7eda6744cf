// The file source's desired set and events, without a file system: what a scan's outcome tells
// downstream, and when.
import { describe, expect, it } from 'vitest';
import { FileSourcePods, TELL_PER_TURN } from '../../../src/config/file-source-pods';
import { loadManifest } from '../../../src/config/manifest';
import type { ConfigSourceEvents, ManifestClaim, StaticPod } from '../../../src/config/types';
import { memoryLogger } from '../../../src/log/logger';
import { waitFor } from '../../support/wait';
import { podYaml } from './helpers';

function podOf(file: string, name: string, image = 'busybox:1'): StaticPod {
  const r = loadManifest(file, podYaml(name, image), 'node-a', new Date(0));
  if ('error' in r) throw new Error(r.error.message);
  return r.pod;
}

function setup() {
  const told: string[] = [];
  const claims: Array<readonly ManifestClaim[]> = [];
  const events: ConfigSourceEvents = {
    update: (u) => told.push(`${u.op} ${u.pod.key}`),
    error: (e) => told.push(`error ${e.file}`),
    warning: (w) => told.push(`warning ${w.file}`),
    ready: () => {},
    refusedClaims: (c) => claims.push(c),
  };
  const { logger, lines } = memoryLogger(2);
  return { pods: new FileSourcePods(logger, events), told, claims, lines };
}

describe('FileSourcePods', () => {
  it('tells a scan’s changes once, at its end, with the refused claims after them', async () => {
    const { pods, told, claims } = setup();
    await pods.batch(async () => {
      pods.accept('/m/b.yaml', podOf('/m/b.yaml', 'b'), []);
      pods.refuse({ file: '/m/x.yaml', message: 'broken', podKey: 'default/x-node-a' });
      pods.accept('/m/a.yaml', podOf('/m/a.yaml', 'a'), ['unknown field "spec.foo"']);
      // Nothing told yet but what is per file (errors and warnings as they come).
      expect(told).toEqual(['error /m/x.yaml', 'warning /m/a.yaml']);
      expect(claims).toEqual([]);
    });
    expect(told.slice(2)).toEqual(['ADD default/a-node-a', 'ADD default/b-node-a']);
    expect(claims).toEqual([[{ file: '/m/x.yaml', podKey: 'default/x-node-a', message: 'broken' }]]);
  });

  it('outside a scan tells each change at once; a file that goes takes its pod and claim along', () => {
    const { pods, told, claims, lines } = setup();
    pods.accept('/m/a.yaml', podOf('/m/a.yaml', 'a'), []);
    expect(told).toEqual(['ADD default/a-node-a']);
    expect(lines.filter((l) => l.includes('Static pod manifest accepted'))).toHaveLength(1);
    pods.refuse({ file: '/m/a.yaml', message: 'broken edit' });
    expect(told).toEqual(['ADD default/a-node-a', 'error /m/a.yaml']); // the last good pod stays
    expect(claims.at(-1)).toEqual([{ file: '/m/a.yaml', message: 'broken edit' }]);
    pods.forget('/m/a.yaml');
    expect(told.at(-1)).toBe('REMOVE default/a-node-a');
    expect(claims.at(-1)).toEqual([]);
    expect(pods.files()).toEqual([]);
  });

  it('tells nothing once closed', () => {
    const { pods, told } = setup();
    pods.close();
    pods.accept('/m/a.yaml', podOf('/m/a.yaml', 'a'), []);
    pods.refuse({ file: '/m/b.yaml', message: 'broken' });
    expect(told).toEqual([]);
    expect(pods.adoptIdentity('/m/a.yaml', podOf('/m/a.yaml', 'a').uid, 'kubelet-uid')).toBe(false);
  });

  it('tells a large difference a few changes per turn of the event loop, in order, each with its line then', async () => {
    const { pods, told, lines } = setup();
    const n = TELL_PER_TURN * 3 + 5;
    const files = Array.from({ length: n }, (_, i) => `/m/p${String(i).padStart(3, '0')}.yaml`);
    await pods.batch(async () => {
      for (const f of files) pods.accept(f, podOf(f, f.slice(3, -5)), []);
    });
    await waitFor(() => told.length === n, { timeoutMs: 10_000, what: 'every ADD told' });
    await pods.batch(async () => {
      for (const f of files) pods.forget(f);
    });
    // What the turn that made the difference tells, and logs: a slice of it.
    const removedLines = (): number => lines.filter((l) => l.includes('Static pod removed from desired set')).length;
    expect(told.length - n).toBe(TELL_PER_TURN);
    expect(removedLines()).toBe(TELL_PER_TURN);
    await waitFor(() => told.length === 2 * n, { timeoutMs: 10_000, what: 'every REMOVE told' });
    expect(told.slice(n)).toEqual(files.map((f) => `REMOVE default/${f.slice(3, -5)}-node-a`));
    expect(removedLines()).toBe(n);
  });

  it('tells an adoption before it returns, and every change still waiting before it', async () => {
    const { pods, told } = setup();
    const files = Array.from({ length: TELL_PER_TURN * 2 }, (_, i) => `/m/q${String(i).padStart(3, '0')}.yaml`);
    await pods.batch(async () => {
      for (const f of files) pods.accept(f, podOf(f, f.slice(3, -5)), []);
    });
    expect(told.length).toBe(TELL_PER_TURN);
    const first = pods.files()[0]!;
    expect(pods.adoptIdentity(first, podOf(first, 'q000').uid, 'kubelet-uid-1')).toBe(true);
    expect(told).toEqual([...files.map((f) => `ADD default/${f.slice(3, -5)}-node-a`), 'UPDATE default/q000-node-a']);
  });
});

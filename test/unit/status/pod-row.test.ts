import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import { humanDuration } from '../../../src/status/print/human-duration.js';
import { podRow } from '../../../src/status/print/pod-row.js';
import { formatTable } from '../../../src/status/print/table.js';
import type { GenerateInput } from '../../../src/status/types.js';
import { ctr, exited, input, ns, runtimePod, sandbox, staticPod, T0 } from './fixtures.js';

const NOW = T0 + 5 * 60_000 + 12_000;

function rowFor(o: Partial<GenerateInput>, meta: Partial<Pod['metadata']> = {}): ReturnType<typeof podRow> {
  const i = input(o);
  const pod: Pod = { ...i.pod, metadata: { ...i.pod.metadata, ...meta }, status: generatePodStatus(i) };
  return podRow(pod, NOW);
}

const twoInits = staticPod({
  initContainers: [
    { name: 'a', image: 'x' },
    { name: 'b', image: 'x' },
  ],
});

describe('podRow (kubectl STATUS column)', () => {
  it.each([
    { name: 'new pod', in: {}, status: 'ContainerCreating', ready: '0/1' },
    { name: 'running', in: { runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) }, status: 'Running', ready: '1/1' },
    {
      name: 'crash loop',
      in: {
        runtime: runtimePod(
          [sandbox()],
          [exited('c1', 'app', 1, { restartCount: 4, finishedAt: ns(T0 + 5 * 60_000) })],
        ),
        waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'x' }]]),
      },
      status: 'CrashLoopBackOff',
      ready: '0/1',
    },
    {
      name: 'completed',
      in: { pod: staticPod({ restartPolicy: 'Never' }), runtime: runtimePod([sandbox()], [exited('c1', 'app', 0)]) },
      status: 'Completed',
      ready: '0/1',
    },
    {
      name: 'error',
      in: { pod: staticPod({ restartPolicy: 'Never' }), runtime: runtimePod([sandbox()], [exited('c1', 'app', 1)]) },
      status: 'Error',
      ready: '0/1',
    },
    {
      name: 'init 0/2',
      in: { pod: twoInits, runtime: runtimePod([sandbox()], [ctr('i1', 'a', { type: 'init' })]) },
      status: 'Init:0/2',
      ready: '0/1',
    },
    {
      name: 'init 1/2',
      in: {
        pod: twoInits,
        runtime: runtimePod(
          [sandbox()],
          [exited('i1', 'a', 0, { createdAt: ns(T0 + 1) }), ctr('i2', 'b', { createdAt: ns(T0 + 2) })],
        ),
      },
      status: 'Init:1/2',
      ready: '0/1',
    },
    {
      name: 'init crash loop',
      in: {
        pod: twoInits,
        runtime: runtimePod([sandbox()], [exited('i1', 'a', 1)]),
        waiting: new Map([['a', { reason: 'CrashLoopBackOff', message: 'x' }]]),
      },
      status: 'Init:CrashLoopBackOff',
      ready: '0/1',
    },
    {
      name: 'image pull',
      in: { waiting: new Map([['app', { reason: 'ErrImagePull', message: 'x' }]]) },
      status: 'ErrImagePull',
      ready: '0/1',
    },
    {
      name: 'sidecar counted in READY',
      in: {
        pod: staticPod({ initContainers: [{ name: 'proxy', image: 'p', restartPolicy: 'Always' }] }),
        runtime: runtimePod(
          [sandbox()],
          [ctr('p1', 'proxy', { createdAt: ns(T0 + 1) }), ctr('c1', 'app', { createdAt: ns(T0 + 2) })],
        ),
      },
      status: 'Running',
      ready: '2/2',
    },
  ])('$name → $status', (c) => {
    const r = rowFor(c.in);
    expect(r.status).toBe(c.status);
    expect(r.ready).toBe(c.ready);
  });

  it('shows Terminating for a pod being stopped', () => {
    const r = rowFor(
      { runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) },
      { deletionTimestamp: new Date(T0).toISOString() },
    );
    expect(r.status).toBe('Terminating');
  });

  it('says how long ago the last restart was, and the age from the start time', () => {
    const r = rowFor({
      runtime: runtimePod(
        [sandbox()],
        [
          ctr('c2', 'app', { restartCount: 4, createdAt: ns(T0 + 5000) }),
          exited('c1', 'app', 1, { finishedAt: ns(NOW - 42_000) }),
        ],
      ),
    });
    expect(r.restarts).toBe('4 (42s ago)');
    expect(r.age).toBe('5m12s');
    expect(r.ip).toBe('10.0.0.11');
    expect(r.node).toBe('node1');
  });
});

describe('humanDuration', () => {
  it.each([
    [0, '0s'],
    [-1500, '0s'],
    [-2500, '<invalid>'],
    [119_000, '119s'],
    [312_000, '5m12s'],
    [300_000, '5m'],
    [45 * 60_000, '45m'],
    [3 * 3_600_000, '3h'],
    [3 * 3_600_000 + 20 * 60_000, '3h20m'],
    [30 * 3_600_000, '30h'],
    [2 * 86_400_000, '2d'],
    [50 * 86_400_000, '50d'],
  ])('%i ms → %s', (ms, text) => expect(humanDuration(ms)).toBe(text));
});

describe('formatTable', () => {
  it('pads columns like kubectl', () => {
    expect(formatTable(['NAME', 'READY', 'AGE'], [['etcd-node1', '1/1', '5m']])).toBe(
      'NAME         READY   AGE\netcd-node1   1/1     5m\n',
    );
  });
});

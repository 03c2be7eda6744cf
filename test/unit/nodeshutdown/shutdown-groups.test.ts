import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import {
  groupByPriority,
  periodRequestedSeconds,
  shutdownPeriods,
  waveBudgetMs,
} from '../../../src/nodeshutdown/shutdown-groups.js';

function pod(name: string, opts: { cls?: string; priority?: number; component?: string; grace?: number } = {}): Pod {
  return {
    metadata: { name, labels: opts.component ? { component: opts.component } : {} },
    spec: {
      containers: [],
      priorityClassName: opts.cls,
      priority: opts.priority,
      terminationGracePeriodSeconds: opts.grace,
    },
  };
}
const names = (ps: Pod[][]) => ps.map((w) => w.map((p) => p.metadata!.name));

describe('shutdownPeriods (migrateConfig)', () => {
  it('is off with shutdownGracePeriod 0 (the default), or critical > total', () => {
    expect(shutdownPeriods(0, 0, [])).toEqual([]);
    expect(shutdownPeriods(10, 20, [])).toEqual([]);
  });
  it('splits shutdownGracePeriod into ordinary pods (priority 0) and critical pods (2000000000)', () => {
    expect(shutdownPeriods(30, 10, [])).toEqual([
      { priority: 0, shutdownGracePeriodSeconds: 20 },
      { priority: 2_000_000_000, shutdownGracePeriodSeconds: 10 },
    ]);
    expect(periodRequestedSeconds(shutdownPeriods(30, 10, []))).toBe(30);
  });
  it('takes shutdownGracePeriodByPodPriority as given, lowest priority first', () => {
    const by = [
      { priority: 100000, shutdownGracePeriodSeconds: 5 },
      { priority: 0, shutdownGracePeriodSeconds: 7 },
    ];
    expect(shutdownPeriods(0, 0, by).map((p) => p.priority)).toEqual([0, 100000]);
  });
});

describe('groupByPriority', () => {
  const periods = [
    { priority: 0, shutdownGracePeriodSeconds: 20 },
    { priority: 10000, shutdownGracePeriodSeconds: 5 },
    { priority: 2_000_000_000, shutdownGracePeriodSeconds: 10 },
  ];
  it('puts a pod in the highest group at or below its priority, the class resolved locally', () => {
    const groups = groupByPriority(
      periods,
      [
        pod('a'),
        pod('b', { priority: 9999 }),
        pod('c', { priority: 10000 }),
        pod('d', { cls: 'system-cluster-critical' }),
        pod('e', { priority: -5 }),
      ],
      (p) => p,
    );
    expect(groups.map((g) => [g.priority, names(g.waves)])).toEqual([
      [0, [['a', 'b', 'e']]],
      [10000, [['c']]],
      [2_000_000_000, [['d']]],
    ]);
  });
  it('orders the control plane in reverse dependency order within a group, and leaves empty groups out', () => {
    const cp = [
      pod('etcd', { cls: 'system-node-critical', component: 'etcd' }),
      pod('apiserver', { cls: 'system-node-critical', component: 'kube-apiserver' }),
      pod('cm', { cls: 'system-node-critical', component: 'kube-controller-manager' }),
      pod('sched', { cls: 'system-node-critical', component: 'kube-scheduler' }),
    ];
    const groups = groupByPriority(periods, cp, (p) => p);
    expect(groups).toHaveLength(1);
    expect(names(groups[0].waves)).toEqual([['cm', 'sched'], ['apiserver'], ['etcd']]);
  });
});

describe('waveBudgetMs', () => {
  const group = (grace: number, etcdGrace: number) =>
    groupByPriority(
      [{ priority: 0, shutdownGracePeriodSeconds: grace }],
      [
        pod('cm', { component: 'kube-controller-manager', grace: 30 }),
        pod('api', { component: 'kube-apiserver', grace: 30 }),
        pod('etcd', { component: 'etcd', grace: etcdGrace }),
      ],
      (p) => p,
    )[0];
  it('gives the last wave (etcd) everything that remains of the group', () => {
    expect(waveBudgetMs(group(10, 30), 2, 7_500, (p) => p)).toBe(7_500);
    expect(waveBudgetMs(group(10, 30), 2, -20, (p) => p)).toBe(0);
  });
  it("leaves the later waves at most an even share each when the group is shorter than their grace (10 s against etcd's 30)", () => {
    // The API server keeps its own time before etcd: never stopped with it at once.
    expect(waveBudgetMs(group(10, 30), 0, 10_000, (p) => p)).toBeCloseTo(10_000 / 3);
    expect(waveBudgetMs(group(10, 30), 1, 9_000, (p) => p)).toBe(4_500);
  });
  it('leaves the later waves only what they need when the group has room for every grace', () => {
    expect(waveBudgetMs(group(120, 10), 0, 120_000, (p) => p)).toBe(120_000 - 40_000);
    expect(waveBudgetMs(group(120, 10), 1, 119_000, (p) => p)).toBe(109_000);
  });
});

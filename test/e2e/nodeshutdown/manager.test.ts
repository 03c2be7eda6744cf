// The node shutdown manager against a real dbus-daemon and a logind stand-in (a real inhibitor
// fd, held by systemd-inhibit), with the pod workers replaced by a recorder of stop calls.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { NodeShutdownManager } from '../../../src/nodeshutdown/node-shutdown-manager.js';
import { shutdownPeriods } from '../../../src/nodeshutdown/shutdown-groups.js';
import type { ShutdownTarget } from '../../../src/nodeshutdown/stop-in-order.js';
import { startLogindBus, type LogindBus } from '../../support/logind/logind-bus.js';
import { waitFor } from '../../support/wait.js';

const logLines: string[] = [];
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: (l) => void logLines.push(l) } });

function target(name: string, opts: { cls?: string; component?: string; grace?: number } = {}): ShutdownTarget {
  const pod: Pod = {
    metadata: {
      name,
      namespace: 'kube-system',
      labels: opts.component ? { component: opts.component } : {},
      annotations: { 'kubernetes.io/config.source': 'file' },
    },
    spec: {
      containers: [],
      ...(opts.cls ? { priorityClassName: opts.cls } : {}),
      terminationGracePeriodSeconds: opts.grace ?? 1,
    },
  };
  return { uid: `uid-${name}`, key: `kube-system/${name}`, pod };
}

describe('node shutdown manager on a real system bus', () => {
  let bus: LogindBus;
  /** The manager's way to this test's bus and logind stand-in (its inhibitor taken through it too). */
  const onBus = () => ({
    busSocket: bus.socket,
    logindConfDir: bus.confDir,
    inhibit: { env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: bus.address } },
  });
  let manager: NodeShutdownManager | undefined;
  beforeAll(async () => {
    bus = await startLogindBus(join(import.meta.dirname, '../../../.tmp/nodeshutdown-manager'), 5);
  });
  afterEach(async () => {
    await manager?.stop();
    manager = undefined;
  });
  afterAll(async () => {
    await bus?.stop();
  });

  it('raises InhibitDelayMaxSec through the drop-in, holds a delay lock, stops pods by priority and control-plane order, then releases', async () => {
    const stops: Array<{ key: string; grace: number; at: number }> = [];
    const flushed: string[][] = [];
    const states: boolean[] = [];
    const pods = [
      target('etcd', { cls: 'system-node-critical', component: 'etcd', grace: 3 }),
      target('kube-apiserver', { cls: 'system-node-critical', component: 'kube-apiserver', grace: 1 }),
      target('kube-scheduler', { cls: 'system-node-critical', component: 'kube-scheduler', grace: 1 }),
      target('web'),
    ];
    manager = new NodeShutdownManager(
      {
        periods: shutdownPeriods(8, 6, []),
        ...onBus(),
      },
      {
        runningPods: () => pods,
        stopPod: async (t, grace) => {
          stops.push({ key: t.pod.metadata!.name!, grace, at: Date.now() });
          await new Promise((r) => setTimeout(r, 200));
        },
        restorePods: () => {},
        setShuttingDown: (on) => states.push(on),
        flush: async (uids) => void flushed.push([...uids]),
        logger,
      },
    );
    manager.start();
    // 8 s wanted, logind allows 5: the kubelet's drop-in, then a reload through systemd's KillUnit.
    await bus.waitEvent((e) => e.event === 'reloaded', 'logind to be reloaded');
    expect(readFileSync(join(bus.confDir, '99-kubelet.conf'), 'utf8')).toBe(
      '# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=8\n',
    );
    const inhibit = await bus.waitEvent((e) => e.event === 'inhibit', 'the inhibitor lock');
    expect(inhibit).toMatchObject({
      what: 'shutdown',
      who: 'kubelet',
      why: 'Kubelet needs time to handle node shutdown',
      mode: 'delay',
    });
    await waitFor(() => manager!.lockHeld(), { timeoutMs: 10_000, what: 'the manager to hold the lock' });

    bus.send('shutdown');
    const released = await bus.waitEvent((e) => e.event === 'released', 'the lock to be released');
    const signal = bus.events.find((e) => e.event === 'prepare' && e.active)!;
    expect(stops.map((s) => s.key)).toEqual(['web', 'kube-scheduler', 'kube-apiserver', 'etcd']);
    // Ordinary pods get their own 1 s (under the group's 2 s); etcd its full 3 s.
    expect(stops.find((s) => s.key === 'etcd')!.grace).toBe(3);
    expect(flushed).toEqual([pods.map((p) => p.uid)]);
    expect(states).toEqual([true]);
    const report = manager.report()!;
    expect(report.graceUsedSeconds).toBe(8);
    const tookMs = released.t - signal.t;
    console.log(
      `shutdown signal -> lock released: ${Math.round(tookMs)} ms; grace periods used: ${report.graceUsedSeconds} s`,
    );
    expect(tookMs).toBeLessThan(report.graceUsedSeconds * 1000 + 2000);
  });

  it("ignores a PrepareForShutdown from any connection but logind's, broadcast or sent to it alone, in one log line; logind's own still stops the pods", async () => {
    const states: boolean[] = [];
    let stopCalls = 0;
    manager = new NodeShutdownManager(
      {
        periods: shutdownPeriods(2, 1, []),
        ...onBus(),
      },
      {
        runningPods: () => [target('web')],
        stopPod: async () => void stopCalls++,
        restorePods: () => {},
        setShuttingDown: (on) => states.push(on),
        flush: async () => {},
        logger,
      },
    );
    const ignored = () => logLines.filter((l) => l.includes('Ignored a PrepareForShutdown signal'));
    const before = ignored().length;
    manager.start();
    await waitFor(() => manager!.lockHeld(), { timeoutMs: 10_000, what: 'the lock' });
    // Five times: on the bus (the match rule names logind, so the bus keeps these back) and to each connection alone.
    const reached = await bus.forge(5);
    expect(reached.length).toBeGreaterThan(0);
    await waitFor(() => ignored().length > before, { timeoutMs: 10_000, what: 'the forged signal logged' });
    expect({ states, stopCalls, lockHeld: manager.lockHeld() }).toEqual({ states: [], stopCalls: 0, lockHeld: true });
    // The forged ones were all sent before this one: once it acts, every forged one has been looked at.
    bus.send('shutdown');
    await waitFor(() => !manager!.lockHeld(), { timeoutMs: 10_000, what: 'the lock released by the real shutdown' });
    expect({ states, stopCalls }).toEqual({ states: [true], stopCalls: 1 });
    // Five forged signals reached the manager: one line, the rest counted for the next.
    expect(ignored().length - before).toBe(1);
    expect(ignored().at(-1)).toMatch(/sender=":1\.\d+"/);
  });

  it('a cancel without a shutdown changes nothing; a cancelled shutdown restores the pods and takes the lock again', async () => {
    let restored = 0;
    const states: boolean[] = [];
    let stopCalls = 0;
    manager = new NodeShutdownManager(
      {
        periods: shutdownPeriods(2, 1, []),
        ...onBus(),
      },
      {
        runningPods: () => [target('web')],
        stopPod: async () => void stopCalls++,
        restorePods: () => void restored++,
        setShuttingDown: (on) => states.push(on),
        flush: async () => {},
        logger,
      },
    );
    manager.start();
    await waitFor(() => manager!.lockHeld(), { timeoutMs: 10_000, what: 'the lock' });
    // Signals arrive in order on one connection: had this cancel acted, states would start with false.
    bus.send('cancel');
    bus.send('shutdown');
    await waitFor(() => !manager!.lockHeld(), { timeoutMs: 10_000, what: 'the lock to be released' });
    bus.send('cancel');
    await waitFor(() => manager!.lockHeld(), { timeoutMs: 10_000, what: 'the lock to be taken again' });
    expect({ restored, stopCalls, states }).toEqual({ restored: 1, stopCalls: 1, states: [true, false] });
  });
});

// Graceful node shutdown end to end: the packaged agent on a real containerd, the fake API
// server, and a logind stand-in on a private dbus-daemon (a real delay lock through
// systemd-inhibit). A control plane of busybox stand-ins (etcd, kube-apiserver, kube-scheduler
// with kubeadm's labels and class) and two ordinary pods record when each got SIGTERM; a pod
// written during the shutdown is refused at admission.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Node, Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { startLogindBus, type LogindBus, type LogindEvent } from '../../support/logind/logind-bus.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from '../agent/harness.js';

const NODE = 'shutdown-e2e';
const h = useAgentHarness('nodeshutdown', NODE);
let api: FakeApiServer;
let bus: LogindBus;
const rec = () => path.join(h.dir, 'rec');
const orderFile = () => path.join(rec(), 'order');

/** On SIGTERM: one line "<name> <uptime>" in the shared file; etcd then "flushes" for a second and says so. */
function recorder(name: string, opts: { component?: string; cls?: string; grace: number; clean?: boolean }): string {
  const onTerm = opts.clean
    ? `echo "${name} $(cut -d' ' -f1 /proc/uptime)" >> /rec/order; sleep 1; echo "${name} clean shutdown" >> /rec/order; exit 0`
    : `echo "${name} $(cut -d' ' -f1 /proc/uptime)" >> /rec/order; exit 0`;
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: kube-system, labels: {${opts.component ? `component: ${opts.component}, tier: control-plane` : `app: ${name}`}}}
spec:
  hostNetwork: true
  ${opts.cls ? `priorityClassName: ${opts.cls}` : ''}
  terminationGracePeriodSeconds: ${opts.grace}
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", ${JSON.stringify(`trap '${onTerm.replace(/'/g, `'"'"'`)}' TERM; while true; do sleep 1 & wait $!; done`)}]
    volumeMounts: [{name: rec, mountPath: /rec}]
  volumes:
  - {name: rec, hostPath: {path: ${rec()}, type: DirectoryOrCreate}}
`;
}

const PODS = ['etcd', 'kube-apiserver', 'kube-scheduler', 'web-a', 'web-b'];
const mirror = (name: string) => api.pod('kube-system', `${name}-${NODE}`);
const ready = () =>
  (api.object('nodes', '', NODE) as unknown as Node | undefined)?.status?.conditions?.find((c) => c.type === 'Ready');
async function runningIds(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const name of PODS)
    for (const p of await h.pods(name))
      for (const c of p.containers) if (c.state === ContainerState.CONTAINER_RUNNING) out.set(name, c.id);
  return out;
}

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const kubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  // logind allows 5 s; the agent wants 12 s (8 for critical pods, 4 for the rest).
  bus = await startLogindBus(path.join(h.dir, 'logind'), 5);
  const config = path.join(h.dir, 'shutdown-config.yaml');
  fs.writeFileSync(
    config,
    `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${h.podLogsDir}\nshutdownGracePeriod: 12s\nshutdownGracePeriodCriticalPods: 8s\n`,
  );
  h.write('etcd.yaml', recorder('etcd', { component: 'etcd', cls: 'system-node-critical', grace: 5, clean: true }));
  h.write(
    'kube-apiserver.yaml',
    recorder('kube-apiserver', { component: 'kube-apiserver', cls: 'system-node-critical', grace: 2 }),
  );
  h.write(
    'kube-scheduler.yaml',
    recorder('kube-scheduler', { component: 'kube-scheduler', cls: 'system-node-critical', grace: 2 }),
  );
  h.write('web-a.yaml', recorder('web-a', { grace: 2 }));
  h.write('web-b.yaml', recorder('web-b', { grace: 2 }));
  h.launch({
    configFile: config,
    extraArgs: ['--v=2', `--kubeconfig=${kubeconfig}`],
    env: { DBUS_SYSTEM_BUS_ADDRESS: bus.address, BOOTLET_LOGIND_CONF_DIR: bus.confDir },
  });
}, 120_000);

afterAll(async () => {
  await h
    .agent()
    .kill('SIGKILL')
    .catch(() => undefined);
  await bus?.stop();
  await api?.stop();
});

describe('graceful node shutdown', () => {
  it('raises logind InhibitDelayMaxSec, holds a delay lock, and mirrors every pod Running', async () => {
    await bus.waitEvent(
      (e) => e.event === 'reloaded' && e.delayUSec === 12_000_000,
      'logind reloaded with 12 s',
      30_000,
    );
    expect(fs.readFileSync(path.join(bus.confDir, '99-kubelet.conf'), 'utf8')).toContain('InhibitDelayMaxSec=12');
    await bus.waitEvent(
      (e) => e.event === 'inhibit' && e.who === 'kubelet' && e.mode === 'delay',
      'the delay lock',
      30_000,
    );
    await waitFor(
      () =>
        PODS.every((n) => mirror(n)?.status?.phase === 'Running' && mirror(n)?.status?.containerStatuses?.[0]?.ready),
      { timeoutMs: 90_000, what: 'every mirror pod Running and ready' },
    );
    // The server computed the mirrors' priority from the class: bootlet sent no number.
    expect(mirror('etcd')?.spec?.priority).toBe(2_000_001_000);
    expect(mirror('web-a')?.spec?.priority).toBe(0);
  });

  it('a cancel with no shutdown before it changes nothing', async () => {
    const before = await runningIds();
    const seen = h.agent().lines.length;
    bus.send('cancel');
    await waitFor(
      () =>
        h
          .agent()
          .lines.slice(seen)
          .some((l) => l.includes('Shutdown manager detected new shutdown event') && l.includes('cancelled')),
      { timeoutMs: 20_000, what: 'the agent to see the cancel' },
    );
    expect(await runningIds()).toEqual(before);
    expect(bus.events.some((e) => e.event === 'released')).toBe(false);
    expect(ready()?.status).toBe('True');
  });

  it('stops ordinary pods, then the control plane in reverse dependency order, posts the final statuses, then releases the lock', async () => {
    let atRelease: { statuses: Record<string, Pod['status']>; ready: ReturnType<typeof ready> } | undefined;
    bus.onEvent((e: LogindEvent) => {
      if (e.event === 'released' && !atRelease)
        atRelease = {
          statuses: Object.fromEntries(PODS.map((n) => [n, structuredClone(mirror(n)?.status)])),
          ready: structuredClone(ready()),
        };
    });
    bus.send('shutdown');
    const released = await bus.waitEvent((e) => e.event === 'released', 'the lock to be released', 60_000);
    const signal = bus.events.find((e) => e.event === 'prepare' && e.active === true)!;
    const order = fs
      .readFileSync(orderFile(), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' ')[0]);
    expect(order.slice(0, 2).sort()).toEqual(['web-a', 'web-b']);
    expect(order.slice(2)).toEqual(['kube-scheduler', 'kube-apiserver', 'etcd', 'etcd']);
    expect(fs.readFileSync(orderFile(), 'utf8')).toContain('etcd clean shutdown');

    // Before the lock went: every pod's terminal status and the node's Ready condition were in the server.
    expect(atRelease).toBeDefined();
    for (const n of PODS) {
      const s = atRelease!.statuses[n];
      expect({ pod: n, phase: s?.phase, reason: s?.reason, message: s?.message }).toEqual({
        pod: n,
        phase: 'Failed',
        reason: 'Terminated',
        message: 'Pod was terminated in response to imminent node shutdown.',
      });
      expect(s?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(0);
    }
    expect(atRelease!.ready).toMatchObject({
      status: 'False',
      reason: 'KubeletNotReady',
      message: 'node is shutting down',
    });

    // etcd got its whole grace (5 s, under the critical pods' 8 s).
    const etcdKill = h
      .agent()
      .lines.find((l) => l.includes('Shutdown manager killing pod with gracePeriod') && l.includes('etcd-'));
    expect(etcdKill).toMatch(/"gracePeriod":5\b/);
    const tookMs = released.t - signal.t;
    console.log(
      `graceful shutdown: signal -> lock released ${Math.round(tookMs)} ms, grace periods used 12 s (4 s ordinary + 8 s critical); etcd given 5 s, exited 0 after its 1 s flush`,
    );
    expect(tookMs).toBeLessThan(12_000);
  });

  it('a pod added while the node shuts down is refused as the kubelet refuses it (NodeShutdown)', async () => {
    h.write('late.yaml', recorder('late', { grace: 2 }));
    const refusal = await h
      .agent()
      .waitForLog(
        (r) => r.msg === 'Pod refused admission' && r.pod === `kube-system/late-${NODE}`,
        'the late pod refused',
        30_000,
      );
    expect(refusal).toMatchObject({
      reason: 'NodeShutdown',
      message: 'Pod was rejected as the node is shutting down.',
    });
    expect(await h.pods('late')).toEqual([]);
  });

  it('a cancelled shutdown brings the node back: pods run again, Ready, and the lock is taken again', async () => {
    const inhibits = bus.events.filter((e) => e.event === 'inhibit').length;
    bus.send('cancel');
    await waitFor(async () => (await runningIds()).size === PODS.length, {
      timeoutMs: 90_000,
      what: 'every pod running again',
    });
    // The pod refused during the shutdown stays refused: it never starts.
    expect(await h.pods('late')).toEqual([]);
    await waitFor(() => PODS.every((n) => mirror(n)?.status?.phase === 'Running') && ready()?.status === 'True', {
      timeoutMs: 60_000,
      what: 'mirrors Running and the node Ready again',
    });
    await bus.waitEvent(
      (e) => e.event === 'inhibit' && bus.events.filter((x) => x.event === 'inhibit').indexOf(e) >= inhibits,
      'the lock taken again',
      30_000,
    );
  });

  it('a removed manifest: the last status the mirror shows before it goes is the terminal one', async () => {
    const seen: Array<{ type: string; phase?: string }> = [];
    const unsubscribe = api.store.subscribe((ev) => {
      const m = ev.object as unknown as Pod;
      if (m.metadata?.name === `web-b-${NODE}` && m.metadata?.namespace === 'kube-system')
        seen.push({ type: ev.type, phase: m.status?.phase });
    });
    try {
      h.remove('web-b.yaml');
      await waitFor(() => seen.some((e) => e.type === 'DELETED'), {
        timeoutMs: 60_000,
        what: 'the web-b mirror to be deleted',
      });
    } finally {
      unsubscribe();
    }
    const beforeDelete = seen.slice(
      0,
      seen.findIndex((e) => e.type === 'DELETED'),
    );
    // The container exits 0 on SIGTERM: Succeeded, not the Running a kubelet leaves behind.
    expect(beforeDelete.at(-1)?.phase).toBe('Succeeded');
  });

  it('stopping the agent leaves the pods running, and their mirrors say Running', async () => {
    const before = await runningIds();
    expect(before.size).toBe(PODS.length - 1);
    await h.agent().kill('SIGTERM');
    expect(await runningIds()).toEqual(before);
    for (const n of PODS.filter((p) => p !== 'web-b'))
      expect({ n, phase: mirror(n)?.status?.phase }).toEqual({ n, phase: 'Running' });
    // The lock went with the agent: a node without it is not held back.
    await bus.waitEvent(
      (e) => e.event === 'released' && bus.events.filter((x) => x.event === 'released').indexOf(e) >= 1,
      'the second lock released with the agent',
      20_000,
    );
  });
});

// The packaged executable against a real (private) containerd: manifests in, pods out, and the
// agent's promises kept through edits, broken files, editor leftovers, crashes and restarts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import type { RunningAgent } from '../../support/agent.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-e2e';
const h = useAgentHarness('lifecycle', NODE, { extraArgs: ['--v=4', '--file-check-frequency=2s'] });
const { manifests, rootDir, podLogsDir } = h;
let agent: RunningAgent | undefined;

function launch(): RunningAgent {
  agent = h.launch();
  return agent;
}

function sleeper(name: string, extra = ''): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: default
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; echo hello from ${name}; while true; do sleep 1; done"]
${extra}`;
}

const write = h.write;

async function podsNamed(name: string): Promise<RuntimePod[]> {
  const pods = await listRuntimePods(h.cri().runtime);
  return [...pods.values()].filter((p) => p.name === `${name}-${NODE}`);
}

async function runningContainer(name: string, container = 'main') {
  const pods = await podsNamed(name);
  for (const p of pods) {
    const c = p.containers.find((c) => c.name === container && c.state === ContainerState.CONTAINER_RUNNING);
    if (c) return { pod: p, container: c };
  }
  return undefined;
}

async function liveState(): Promise<{ sandboxes: string[]; containers: string[] }> {
  const pods = await listRuntimePods(h.cri().runtime);
  const all = [...pods.values()];
  return {
    sandboxes: all
      .flatMap((p) => p.sandboxes.filter((s) => s.state === PodSandboxState.SANDBOX_READY).map((s) => s.id))
      .sort(),
    containers: all
      .flatMap((p) => p.containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => c.id))
      .sort(),
  };
}

beforeAll(() => {
  launch();
});

describe('bootlet against a real containerd', () => {
  it('runs a pod from a manifest, labelled as the kubelet labels it, logging in the CRI layout', async () => {
    write('sleeper.yaml', sleeper('sleeper'));
    const found = await waitFor(() => runningContainer('sleeper'), {
      timeoutMs: 60_000,
      what: 'sleeper container running',
    });
    const sandboxes = await h
      .cri()
      .runtime.listPodSandbox({ labelSelector: { 'io.kubernetes.pod.uid': found.pod.uid } });
    expect(sandboxes).toHaveLength(1);
    expect(sandboxes[0]!.labels['io.kubernetes.pod.name']).toBe(`sleeper-${NODE}`);
    expect(sandboxes[0]!.labels['io.kubernetes.pod.namespace']).toBe('default');
    expect(sandboxes[0]!.annotations['kubernetes.io/config.source']).toBe('file');
    expect(sandboxes[0]!.annotations['kubernetes.io/config.hash']).toBe(found.pod.uid);
    expect(found.pod.uid).toMatch(/^[0-9a-f]{32}$/);
    expect(found.container.meta.restartCount).toBe(0);
    const log = path.join(podLogsDir, `default_sleeper-${NODE}_${found.pod.uid}`, 'main', '0.log');
    const line = await waitFor(
      () =>
        fs.existsSync(log) &&
        fs
          .readFileSync(log, 'utf8')
          .split('\n')
          .find((l) => l.includes('hello from sleeper')),
      {
        timeoutMs: 20_000,
        what: `${log} to hold the container's output`,
      },
    );
    expect(line).toMatch(/^\S+ stdout F hello from sleeper$/);
  });

  it('ignores editor and package-manager leftovers', async () => {
    write('ghost.yaml.bak', sleeper('ghost-bak'));
    fs.writeFileSync(path.join(manifests, '.sleeper.yaml.swp'), sleeper('ghost-swp'));
    fs.writeFileSync(path.join(manifests, 'sleeper.yaml~'), sleeper('ghost-tilde'));
    for (const f of ['ghost.yaml.bak', 'sleeper.yaml~']) {
      await agent!.waitForLog(
        (r) => r.msg === 'Skipping file in manifest directory' && String(r.file).endsWith(f),
        `${f} skipped`,
      );
    }
    // A pod written after the leftovers runs, so they were seen and passed over, not missed.
    write('marker.yaml', sleeper('marker'));
    await waitFor(() => runningContainer('marker'), { timeoutMs: 60_000, what: 'marker running' });
    for (const ghost of ['ghost-bak', 'ghost-swp', 'ghost-tilde']) expect(await podsNamed(ghost)).toEqual([]);
    for (const f of ['ghost.yaml.bak', '.sleeper.yaml.swp', 'sleeper.yaml~']) fs.rmSync(path.join(manifests, f));
  });

  it('keeps the pod of a manifest whose edit is broken, and says why', async () => {
    const before = await runningContainer('sleeper');
    const marker = await runningContainer('marker');
    fs.writeFileSync(
      path.join(manifests, 'sleeper.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: sleeper\n spec: [\n',
    );
    const err = await agent!.waitForLog(
      (r) => r.msg === 'Static pod manifest refused' && String(r.file).endsWith('sleeper.yaml'),
      'broken sleeper refused',
    );
    expect(String(err.err)).toMatch(/line \d+/);
    // Let a full rescan pass over the broken file too (the kubelet would drop the pod there).
    const seen = agent!.records().length;
    await waitFor(
      () =>
        agent!
          .records()
          .slice(seen)
          .some((r) => r.msg === 'Manifest path rescanned'),
      {
        timeoutMs: 30_000,
        what: 'a full rescan after the broken edit',
      },
    );
    expect((await runningContainer('sleeper'))?.container.id).toBe(before!.container.id);
    expect((await runningContainer('marker'))?.container.id).toBe(marker!.container.id);
    expect(await podsNamed('sleeper')).toHaveLength(1);
  });

  it('replaces the pod when its manifest changes, never running both', async () => {
    const before = await runningContainer('sleeper');
    write('sleeper.yaml', sleeper('sleeper', '    env:\n    - name: EDITION\n      value: "2"\n'));
    const after = await waitFor(
      async () => {
        const r = await runningContainer('sleeper');
        return r && r.pod.uid !== before!.pod.uid ? r : undefined;
      },
      { timeoutMs: 60_000, what: 'the edited sleeper to run under a new UID' },
    );
    // The old pod was stopped before the new one started, and is then removed.
    const oldStopped = agent!.records().findIndex((r) => r.msg === 'Pod terminated' && r.podUID === before!.pod.uid);
    const newSandbox = agent!.records().findIndex((r) => r.msg === 'Created pod sandbox' && r.podUID === after.pod.uid);
    expect(oldStopped).toBeGreaterThanOrEqual(0);
    expect(newSandbox).toBeGreaterThan(oldStopped);
    await waitFor(async () => (await podsNamed('sleeper')).length === 1, {
      timeoutMs: 30_000,
      what: 'the old sleeper pod to be removed',
    });
  });

  it('refuses a second file declaring the same pod, naming both files', async () => {
    write('zz-duplicate.yaml', sleeper('sleeper', '    env:\n    - name: DUPLICATE\n      value: "yes"\n'));
    const err = await agent!.waitForLog(
      (r) => r.msg === 'Static pod manifest refused' && String(r.file).endsWith('zz-duplicate.yaml'),
      'duplicate refused',
    );
    expect(String(err.err)).toContain('sleeper.yaml');
    expect(await podsNamed('sleeper')).toHaveLength(1);
    fs.rmSync(path.join(manifests, 'zz-duplicate.yaml'));
  });

  it('restarts a container that exits under restartPolicy Always', async () => {
    write(
      'crasher.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: crasher}
spec:
  hostNetwork: true
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "echo run; sleep 1; exit 3"]
`,
    );
    const restarted = await waitFor(
      async () => {
        const [pod] = await podsNamed('crasher');
        return pod?.containers.find((c) => c.meta.restartCount >= 1);
      },
      { timeoutMs: 60_000, what: 'crasher restarted once' },
    );
    expect(restarted.name).toBe('main');
    const [pod] = await podsNamed('crasher');
    expect(pod!.sandboxes).toHaveLength(1);
    fs.rmSync(path.join(manifests, 'crasher.yaml'));
    await waitFor(async () => (await podsNamed('crasher')).length === 0, {
      timeoutMs: 30_000,
      what: 'crasher removed',
    });
  });

  it('adopts everything after SIGKILL and restart: same sandboxes, same containers, nothing duplicated', async () => {
    const before = await liveState();
    expect(before.containers.length).toBeGreaterThanOrEqual(2);
    await agent!.kill('SIGKILL');
    const restarted = launch();
    const keys = [`default/sleeper-${NODE}`, `default/marker-${NODE}`];
    for (const key of keys) {
      await restarted.waitForLog((r) => r.msg === 'Pod synced' && r.pod === key, `${key} synced after restart`, 60_000);
    }
    const synced = restarted.records().filter((r) => r.msg === 'Pod synced');
    expect(synced.every((r) => r.started === 0 && r.killed === 0 && r.sandboxCreated === false)).toBe(true);
    expect(await liveState()).toEqual(before);
  });

  it('removes the pod when its manifest is deleted', async () => {
    const marker = await runningContainer('marker');
    fs.rmSync(path.join(manifests, 'marker.yaml'));
    await waitFor(async () => (await podsNamed('marker')).length === 0, {
      timeoutMs: 30_000,
      what: 'marker pod removed from the runtime',
    });
    await agent!.waitForLog((r) => r.msg === 'Pod removed' && r.podUID === marker!.pod.uid, 'marker cleaned up');
    expect(fs.existsSync(path.join(podLogsDir, `default_marker-${NODE}_${marker!.pod.uid}`))).toBe(false);
    expect(fs.existsSync(path.join(rootDir, 'pods', marker!.pod.uid))).toBe(false);
  });

  it('runs the real etcd as a static pod with its data on a hostPath', async () => {
    const [client, peer] = await freePorts(2);
    const dataDir = path.join(h.dir, 'etcd-data');
    write(
      'etcd.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: etcd, namespace: kube-system, labels: {component: etcd, tier: control-plane}}
spec:
  hostNetwork: true
  priorityClassName: system-node-critical
  containers:
  - name: etcd
    image: ${TEST_IMAGES.etcd}
    command: [etcd, --data-dir=/var/lib/etcd, --name=e2e, --logger=zap,
      --listen-client-urls=http://127.0.0.1:${client}, --advertise-client-urls=http://127.0.0.1:${client},
      --listen-peer-urls=http://127.0.0.1:${peer}, --initial-advertise-peer-urls=http://127.0.0.1:${peer},
      --initial-cluster=e2e=http://127.0.0.1:${peer}]
    volumeMounts: [{name: etcd-data, mountPath: /var/lib/etcd}]
  volumes:
  - name: etcd-data
    hostPath: {path: ${dataDir}, type: DirectoryOrCreate}
`,
    );
    const health = await waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${client}/health`).catch(() => undefined);
        return res?.ok ? ((await res.json()) as { health: string }) : undefined;
      },
      { timeoutMs: 60_000, what: 'etcd /health' },
    );
    expect(health.health).toBe('true');
    expect(fs.existsSync(path.join(dataDir, 'member'))).toBe(true);
  });

  it('leaves the pods running when stopped with SIGTERM', async () => {
    const before = await liveState();
    const code = await agent!.kill('SIGTERM');
    expect(code).toBe(0);
    expect(await liveState()).toEqual(before);
    // Clean up through the agent itself: no manifests, then every pod goes.
    for (const f of fs.readdirSync(manifests)) fs.rmSync(path.join(manifests, f));
    launch();
    await waitFor(async () => (await listRuntimePods(h.cri().runtime)).size === 0, {
      timeoutMs: 60_000,
      what: 'every pod removed after its manifest went',
    });
  });
});

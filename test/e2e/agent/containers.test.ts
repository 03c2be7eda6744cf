// Pod lifecycle through the packaged agent and a real containerd: init containers in order,
// sidecars kept running and stopped last, preStop hooks, restart policies for finished pods,
// and the runAsNonRoot refusal.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { BOOTLET_EXE, type RunningAgent } from '../../support/agent.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-c';
const h = useAgentHarness('containers', NODE, { extraArgs: ['--v=3', '--sync-frequency=5s'] });
const { manifests, rootDir } = h;
const shared = path.join(h.dir, 'shared');
const write = h.write;
let agent: RunningAgent;
let healthzPort: number;

async function pod(name: string): Promise<RuntimePod | undefined> {
  return (await h.pods(name))[0];
}

const sh = (script: string) => JSON.stringify(['sh', '-c', script]);

beforeAll(async () => {
  fs.mkdirSync(shared, { recursive: true });
  [healthzPort] = await freePorts(1);
  agent = h.launch({ healthzPort });
});

describe('containers of a pod', () => {
  it('runs init containers one at a time, each to success, then the app', async () => {
    write(
      'init.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: init}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  initContainers:
  - {name: first, image: ${TEST_IMAGES.busybox}, command: ${sh('sleep 1; echo first >> /work/order')}, volumeMounts: [{name: work, mountPath: /work}]}
  - {name: second, image: ${TEST_IMAGES.busybox}, command: ${sh('grep -q first /work/order && echo second >> /work/order')}, volumeMounts: [{name: work, mountPath: /work}]}
  containers:
  - {name: app, image: ${TEST_IMAGES.busybox}, command: ${sh("echo app >> /work/order; trap 'exit 0' TERM; while true; do sleep 1; done")}, volumeMounts: [{name: work, mountPath: /work}]}
  volumes:
  - {name: work, emptyDir: {}}
`,
    );
    const p = await waitFor(
      async () => {
        const p = await pod('init');
        return p?.containers.some((c) => c.name === 'app' && c.state === ContainerState.CONTAINER_RUNNING)
          ? p
          : undefined;
      },
      { timeoutMs: 60_000, what: 'init pod app running' },
    );
    const first = p.containers.find((c) => c.name === 'first')!;
    const second = p.containers.find((c) => c.name === 'second')!;
    const app = p.containers.find((c) => c.name === 'app')!;
    expect(first.exitCode).toBe(0);
    expect(second.exitCode).toBe(0);
    expect(second.createdAt).toBeGreaterThan(first.finishedAt);
    expect(app.createdAt).toBeGreaterThan(second.finishedAt);
    const order = fs.readFileSync(
      path.join(rootDir, 'pods', p.uid, 'volumes', 'kubernetes.io~empty-dir', 'work', 'order'),
      'utf8',
    );
    expect(order).toBe('first\nsecond\napp\n');
  });

  it('keeps a sidecar running beside the app and stops it after the app, running preStop hooks', async () => {
    write(
      'sidecar.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: sidecar}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 10
  initContainers:
  - name: proxy
    image: ${TEST_IMAGES.busybox}
    restartPolicy: Always
    command: ${sh("trap 'echo proxy >> /shared/stops; exit 0' TERM; while true; do sleep 0.2; done")}
    volumeMounts: [{name: shared, mountPath: /shared}]
  containers:
  - name: app
    image: ${TEST_IMAGES.busybox}
    command: ${sh("trap 'echo app >> /shared/stops; exit 0' TERM; while true; do sleep 0.2; done")}
    lifecycle:
      preStop:
        exec: {command: ${sh('echo drained > /shared/prestop')}}
    volumeMounts: [{name: shared, mountPath: /shared}]
  volumes:
  - {name: shared, hostPath: {path: ${shared}, type: Directory}}
`,
    );
    await waitFor(
      async () => {
        const p = await pod('sidecar');
        const running = (n: string) =>
          p?.containers.some((c) => c.name === n && c.state === ContainerState.CONTAINER_RUNNING);
        return running('proxy') && running('app');
      },
      { timeoutMs: 60_000, what: 'sidecar and app running together' },
    );
    fs.rmSync(path.join(manifests, 'sidecar.yaml'));
    await waitFor(async () => (await pod('sidecar')) === undefined, { timeoutMs: 60_000, what: 'sidecar pod removed' });
    expect(fs.readFileSync(path.join(shared, 'prestop'), 'utf8')).toBe('drained\n');
    expect(fs.readFileSync(path.join(shared, 'stops'), 'utf8')).toBe('app\nproxy\n');
  });

  it('leaves a completed pod completed under Never and OnFailure, and restarts a failure under OnFailure', async () => {
    const job = (name: string, policy: string, code: number) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}}
spec:
  hostNetwork: true
  restartPolicy: ${policy}
  containers:
  - {name: main, image: ${TEST_IMAGES.busybox}, command: ${sh(`echo done; exit ${code}`)}}
`;
    write('never.yaml', job('never', 'Never', 0));
    write('onfailure-ok.yaml', job('onfailure-ok', 'OnFailure', 0));
    write('onfailure-bad.yaml', job('onfailure-bad', 'OnFailure', 3));
    await waitFor(async () => (await pod('onfailure-bad'))?.containers.some((c) => c.meta.restartCount >= 1), {
      timeoutMs: 60_000,
      what: 'failing OnFailure pod restarted',
    });
    for (const name of ['never', 'onfailure-ok']) {
      const p = await waitFor(
        async () => {
          const p = await pod(name);
          return p?.containers.length === 1 && p.containers[0]!.state === ContainerState.CONTAINER_EXITED
            ? p
            : undefined;
        },
        { timeoutMs: 60_000, what: `${name} completed` },
      );
      expect(p.containers[0]!.exitCode).toBe(0);
    }
    // Resyncs pass over the completed pods without starting them again.
    const before = agent.records().length;
    await waitFor(
      () =>
        agent
          .records()
          .slice(before)
          .find((r) => r.msg === 'Pod synced' && r.pod === `default/never-${NODE}`),
      { timeoutMs: 30_000, what: 'never re-synced' },
    );
    expect((await pod('never'))!.containers).toHaveLength(1);
    expect((await pod('onfailure-ok'))!.containers).toHaveLength(1);
    for (const f of ['never.yaml', 'onfailure-ok.yaml', 'onfailure-bad.yaml']) fs.rmSync(path.join(manifests, f));
  });

  it('refuses to run a root image under runAsNonRoot, with the kubelet reason', async () => {
    write(
      'nonroot.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: nonroot}
spec:
  hostNetwork: true
  securityContext: {runAsNonRoot: true}
  containers:
  - {name: main, image: ${TEST_IMAGES.busybox}, command: ${sh('sleep 3600')}}
`,
    );
    const rec = await agent.waitForLog(
      (r) => r.msg === 'Failed to start container' && r.pod === `default/nonroot-${NODE}`,
      'nonroot refused',
    );
    expect(rec.reason).toBe('CreateContainerConfigError');
    expect(String(rec.err)).toContain('container has runAsNonRoot and image will run as root');
    expect((await pod('nonroot'))?.containers ?? []).toHaveLength(0);
    fs.rmSync(path.join(manifests, 'nonroot.yaml'));
  });

  it('restarts a container whose liveness probe fails, saying why', async () => {
    write(
      'liveness.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: liveness}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ${sh("touch /tmp/healthy; sleep 2; rm /tmp/healthy; trap 'exit 0' TERM; while true; do sleep 0.2; done")}
    livenessProbe:
      exec: {command: [cat, /tmp/healthy]}
      periodSeconds: 1
      failureThreshold: 2
`,
    );
    const killed = await agent.waitForLog(
      (r) =>
        r.msg === 'Killing container' &&
        r.pod === `default/liveness-${NODE}` &&
        String(r.reason).includes('failed liveness probe'),
      'liveness kill',
      60_000,
    );
    expect(killed.reason).toBe('Container main failed liveness probe, will be restarted');
    await waitFor(
      async () =>
        (await pod('liveness'))?.containers.some(
          (c) => c.meta.restartCount >= 1 && c.state === ContainerState.CONTAINER_RUNNING,
        ),
      {
        timeoutMs: 60_000,
        what: 'liveness container restarted',
      },
    );
    fs.rmSync(path.join(manifests, 'liveness.yaml'));
  });

  it('shows the pods and their status through `bootlet pods` and /pods, and answers /healthz', async () => {
    write(
      'status.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: status, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - {name: main, image: ${TEST_IMAGES.busybox}, command: ${sh("trap 'exit 0' TERM; while true; do sleep 1; done")}}
`,
    );
    const run = promisify(execFile);
    const table = await waitFor(
      async () => {
        const { stdout } = await run(BOOTLET_EXE, ['pods', `--root-dir=${rootDir}`]);
        return stdout.split('\n').find((l) => l.includes(`status-${NODE}`) && /\b1\/1\s+Running\b/.test(l))
          ? stdout
          : undefined;
      },
      { timeoutMs: 60_000, what: 'bootlet pods to show the pod Running 1/1' },
    );
    expect(table.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/);
    const { stdout } = await run(BOOTLET_EXE, ['pods', '-o', 'json', `--root-dir=${rootDir}`]);
    const list = JSON.parse(stdout) as {
      kind: string;
      items: {
        metadata: { name: string; uid: string };
        status: {
          phase: string;
          podIP: string;
          conditions: { type: string; status: string }[];
          containerStatuses: { containerID: string; ready: boolean }[];
        };
      }[];
    };
    expect(list.kind).toBe('PodList');
    const item = list.items.find((i) => i.metadata.name === `status-${NODE}`)!;
    expect(item.status.phase).toBe('Running');
    expect(item.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(item.status.containerStatuses[0]!.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    const healthz = await fetch(`http://127.0.0.1:${healthzPort}/healthz`);
    expect(await healthz.text()).toBe('ok');
    fs.rmSync(path.join(manifests, 'status.yaml'));
  });
});

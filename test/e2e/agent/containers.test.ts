// Pod lifecycle through the packaged agent and a real containerd: init containers in order,
// sidecars kept running and stopped last, preStop hooks, restart policies for finished pods,
// and the runAsNonRoot refusal.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../../../dev/images.js';
import { connectRuntime, type RuntimeConnection } from '../../../src/runtime/cri-client.js';
import { ContainerState } from '../../../src/runtime/cri-types.js';
import { getRuntimePod, listRuntimePods, type RuntimePod } from '../../../src/runtime/runtime-pods.js';
import { startAgent, type RunningAgent } from '../../support/agent.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const NODE = 'node-c';
const tmp = useTmpDir('agent-containers');
const manifests = path.join(tmp, 'manifests');
const rootDir = path.join(tmp, 'root');
const podLogsDir = path.join(tmp, 'logs', 'pods');
const shared = path.join(tmp, 'shared');
const configFile = path.join(tmp, 'kubelet-config.yaml');

let cd: PrivateContainerd;
let cri: RuntimeConnection;
let agent: RunningAgent;

function write(file: string, content: string): void {
  fs.writeFileSync(path.join(manifests, `.${file}.tmp`), content);
  fs.renameSync(path.join(manifests, `.${file}.tmp`), path.join(manifests, file));
}

async function pod(name: string): Promise<RuntimePod | undefined> {
  const found = [...(await listRuntimePods(cri.runtime)).values()].find((p) => p.name === `${name}-${NODE}`);
  return found ? getRuntimePod(cri.runtime, found.uid) : undefined;
}

const sh = (script: string) => JSON.stringify(['sh', '-c', script]);

beforeAll(async () => {
  await cleanupStaleContainerds();
  cd = await startContainerd({ name: 'containers' });
  await importTestImages(cd);
  cri = await connectRuntime(cd.endpoint);
  fs.mkdirSync(manifests, { recursive: true });
  fs.mkdirSync(shared, { recursive: true });
  fs.writeFileSync(configFile, `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${podLogsDir}\n`);
  agent = startAgent({ manifests, endpoint: cd.endpoint, rootDir, podLogsDir, nodeName: NODE, configFile, extraArgs: ['--v=3', '--sync-frequency=5s'] });
});

afterAll(async () => {
  await agent?.kill('SIGKILL');
  cri?.runtime.close();
  await cd?.stop();
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
    const p = await waitFor(async () => {
      const p = await pod('init');
      return p?.containers.some((c) => c.name === 'app' && c.state === ContainerState.CONTAINER_RUNNING) ? p : undefined;
    }, { timeoutMs: 60_000, what: 'init pod app running' });
    const first = p.containers.find((c) => c.name === 'first')!;
    const second = p.containers.find((c) => c.name === 'second')!;
    const app = p.containers.find((c) => c.name === 'app')!;
    expect(first.exitCode).toBe(0);
    expect(second.exitCode).toBe(0);
    expect(second.createdAt).toBeGreaterThan(first.finishedAt);
    expect(app.createdAt).toBeGreaterThan(second.finishedAt);
    const order = fs.readFileSync(path.join(rootDir, 'pods', p.uid, 'volumes', 'kubernetes.io~empty-dir', 'work', 'order'), 'utf8');
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
    await waitFor(async () => {
      const p = await pod('sidecar');
      const running = (n: string) => p?.containers.some((c) => c.name === n && c.state === ContainerState.CONTAINER_RUNNING);
      return running('proxy') && running('app');
    }, { timeoutMs: 60_000, what: 'sidecar and app running together' });
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
    await waitFor(async () => (await pod('onfailure-bad'))?.containers.some((c) => c.meta.restartCount >= 1), { timeoutMs: 60_000, what: 'failing OnFailure pod restarted' });
    for (const name of ['never', 'onfailure-ok']) {
      const p = await waitFor(async () => {
        const p = await pod(name);
        return p?.containers.length === 1 && p.containers[0]!.state === ContainerState.CONTAINER_EXITED ? p : undefined;
      }, { timeoutMs: 60_000, what: `${name} completed` });
      expect(p.containers[0]!.exitCode).toBe(0);
    }
    // Resyncs pass over the completed pods without starting them again.
    const before = agent.records().length;
    await waitFor(() => agent.records().slice(before).find((r) => r.msg === 'Pod synced' && r.pod === `default/never-${NODE}`), { timeoutMs: 30_000, what: 'never re-synced' });
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
    const rec = await agent.waitForLog((r) => r.msg === 'Failed to start container' && r.pod === `default/nonroot-${NODE}`, 'nonroot refused');
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
      (r) => r.msg === 'Killing container' && r.pod === `default/liveness-${NODE}` && String(r.reason).includes('failed liveness probe'),
      'liveness kill',
      60_000,
    );
    expect(killed.reason).toBe('Container main failed liveness probe, will be restarted');
    await waitFor(async () => (await pod('liveness'))?.containers.some((c) => c.meta.restartCount >= 1 && c.state === ContainerState.CONTAINER_RUNNING), {
      timeoutMs: 60_000,
      what: 'liveness container restarted',
    });
    fs.rmSync(path.join(manifests, 'liveness.yaml'));
  });
});


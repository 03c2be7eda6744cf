// The pod status against a real containerd, wired in-process as run.ts wires it: pod workers run
// the pods, the status manager follows them, the agent's socket serves them and `bootlet pods`
// prints them. Checks what only a real runtime can tell: ids, image refs, exit reasons, the
// termination message file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ContainerStatus, PodStatus } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../../../dev/images.js';
import { runPodsCommand } from '../../../src/cli/pods-command.js';
import { loadManifest } from '../../../src/config/manifest.js';
import type { StaticPod } from '../../../src/config/types.js';
import { createLogger } from '../../../src/log/logger.js';
import type { PodWorkerObserver } from '../../../src/podworkers/observer.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import { connectRuntime, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { listRuntimePods } from '../../../src/kuberuntime/runtime-pods.js';
import { PodCache } from '../../../src/pleg/pod-cache.js';
import { RuntimeReader } from '../../../src/pleg/runtime-reader.js';
import { startEndpoints, type RunningEndpoints } from '../../../src/server/endpoints.js';
import { StatusManager } from '../../../src/status/status-manager.js';
import { statusObserver } from '../../../src/status/worker-events.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const NODE = 'node-s';
const NODE_IP = '127.0.0.1';
const tmp = useTmpDir('status');
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });

let cd: PrivateContainerd;
let cri: RuntimeConnection;
let workers: PodWorkers;
let status: StatusManager;
let server: RunningEndpoints;

function manifest(name: string, body: string): StaticPod {
  const r = loadManifest(
    path.join(tmp, `${name}.yaml`),
    `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n${body}`,
    NODE,
    new Date(),
  );
  if ('error' in r) throw new Error(r.error.message);
  return r.pod;
}

const sh = (script: string): string => JSON.stringify(['sh', '-c', script]);

function container(s: PodStatus | undefined, name: string): ContainerStatus | undefined {
  return [...(s?.initContainerStatuses ?? []), ...(s?.containerStatuses ?? [])].find((c) => c.name === name);
}

async function statusWhen(pod: StaticPod, pred: (s: PodStatus) => boolean, what: string): Promise<PodStatus> {
  return waitFor(
    () => {
      status.update(pod.uid);
      const s = status.get(pod.uid)?.status;
      return s && pred(s) ? s : undefined;
    },
    { timeoutMs: 90_000, intervalMs: 250, what },
  );
}

beforeAll(async () => {
  await cleanupStaleContainerds();
  cd = await startContainerd({ name: 'status' });
  await importTestImages(cd);
  cri = await connectRuntime(cd.endpoint);
  const podRuntime = new CriPodRuntime({
    runtime: cri.runtime,
    images: cri.images,
    rootDir: path.join(tmp, 'root'),
    podLogsDir: path.join(tmp, 'logs'),
    nodeName: NODE,
    nodeIP: NODE_IP,
    resolvConf: '',
    logger,
  });
  const observers: PodWorkerObserver[] = [];
  const cache = new PodCache();
  const reader = new RuntimeReader(cri.runtime, cache);
  workers = new PodWorkers({ runtime: podRuntime, logger, syncFrequencyMs: 5_000, observers, cache: reader });
  status = new StatusManager({
    runtimePod: (uid) => cache.get(uid).pod,
    pods: () => workers.snapshot(),
    probes: { ready: () => undefined, started: () => undefined },
    nodeIP: NODE_IP,
    runtimeName: cri.version.runtimeName,
    logger,
  });
  observers.push(statusObserver(status));
  workers.start(() => false);
  server = await startEndpoints({
    healthzBindAddress: '127.0.0.1',
    healthzPort: 0,
    address: '127.0.0.1',
    readOnlyPort: 0,
    rootDir: path.join(tmp, 'root'),
    syncFrequencyMs: 5_000,
    source: { statuses: () => status.all(), sinceLastRelistMs: () => 0 },
    logger,
  });
});

afterAll(async () => {
  await server?.close();
  workers?.shutdown();
  status?.stop();
  const rt = cri?.runtime;
  if (rt) {
    for (const p of (await listRuntimePods(rt).catch(() => new Map())).values()) {
      for (const c of p.containers) await rt.stopContainer(c.id, 0).catch(() => undefined);
      for (const s of p.sandboxes) {
        await rt.stopPodSandbox(s.id).catch(() => undefined);
        await rt.removePodSandbox(s.id).catch(() => undefined);
      }
    }
    rt.close();
  }
  await cd?.stop();
  fs.rmSync(path.join(tmp, 'root'), { recursive: true, force: true });
});

describe('pod status from a real containerd', () => {
  it('reports a running pod with runtime ids, image ref, host IP and Ready', async () => {
    const pod = manifest(
      'web',
      `  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - {name: app, image: ${TEST_IMAGES.busybox}, imagePullPolicy: IfNotPresent, command: ${sh("trap 'exit 0' TERM; while true; do sleep 1; done")}}
`,
    );
    workers.apply({ op: 'ADD', pod });
    const s = await statusWhen(
      pod,
      (x) => x.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
      'web Ready',
    );
    expect(s).toMatchObject({ phase: 'Running', hostIP: NODE_IP, podIP: NODE_IP, qosClass: 'BestEffort' });
    const app = container(s, 'app')!;
    expect(app.containerID).toMatch(/^containerd:\/\/[0-9a-f]{64}$/);
    expect(app.imageID).toMatch(/sha256:[0-9a-f]{64}$/);
    expect(app.image).toBe(TEST_IMAGES.busybox);
    expect(app).toMatchObject({ ready: true, started: true, restartCount: 0 });
    expect(app.state?.running?.startedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('reports a failed Never pod with exit code, reason and termination message', async () => {
    const pod = manifest(
      'fails',
      `  hostNetwork: true
  restartPolicy: Never
  containers:
  - {name: job, image: ${TEST_IMAGES.busybox}, imagePullPolicy: IfNotPresent, command: ${sh('echo -n bye > /dev/termination-log; exit 3')}}
`,
    );
    workers.apply({ op: 'ADD', pod });
    const s = await statusWhen(pod, (x) => x.phase === 'Failed', 'fails Failed');
    expect(container(s, 'job')?.state?.terminated).toMatchObject({ exitCode: 3, reason: 'Error', message: 'bye' });
  });

  it('reports a completed Never pod as Succeeded', async () => {
    const pod = manifest(
      'done',
      `  hostNetwork: true
  restartPolicy: Never
  containers:
  - {name: job, image: ${TEST_IMAGES.busybox}, imagePullPolicy: IfNotPresent, command: ${sh('exit 0')}}
`,
    );
    workers.apply({ op: 'ADD', pod });
    const s = await statusWhen(pod, (x) => x.phase === 'Succeeded', 'done Succeeded');
    expect(container(s, 'job')?.state?.terminated).toMatchObject({ exitCode: 0, reason: 'Completed' });
  });

  it('reports a crash loop with the previous run as lastState', async () => {
    const pod = manifest(
      'crash',
      `  hostNetwork: true
  containers:
  - {name: app, image: ${TEST_IMAGES.busybox}, imagePullPolicy: IfNotPresent, command: ${sh('exit 1')}}
`,
    );
    workers.apply({ op: 'ADD', pod });
    const s = await statusWhen(
      pod,
      (x) => container(x, 'app')?.state?.waiting?.reason === 'CrashLoopBackOff',
      'crash CrashLoopBackOff',
    );
    expect(s.phase).toBe('Running');
    expect(container(s, 'app')?.lastState?.terminated).toMatchObject({ exitCode: 1, reason: 'Error' });
    expect(container(s, 'app')?.restartCount).toBeGreaterThanOrEqual(1);
  });

  it('prints them all through `bootlet pods`', async () => {
    let out = '';
    expect(
      await runPodsCommand(
        ['--root-dir', path.join(tmp, 'root')],
        (x) => (out += x),
        () => {},
      ),
    ).toBe(0);
    const statusOf = (name: string): string | undefined =>
      out
        .split('\n')
        .find((l) => l.includes(`${name}-${NODE} `))
        ?.split(/\s+/)[3];
    expect(statusOf('web')).toBe('Running');
    expect(statusOf('fails')).toBe('Error');
    expect(statusOf('done')).toBe('Completed');
    expect(statusOf('crash')).toBe('CrashLoopBackOff');
  });
});

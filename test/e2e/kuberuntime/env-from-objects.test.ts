// Env from API objects against a real containerd, wired in-process as the agent wires the workers:
// an API pod whose container reads a ConfigMap (envFrom with a prefix, configMapKeyRef, a Secret)
// and the service variables, through CriPodRuntime's podObjects; and a pod whose ConfigMap does not
// exist yet, which waits in CreateContainerConfigError with a Warning Failed event and starts once
// the object appears: PodObjects.onChange wakes its worker at once (about 2 s to running here); the
// worker's own error retry (10-15 s, as the kubelet's) would get there too, and its periodic sync
// is set far beyond the waits.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Container, PodStatus } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../../../dev/images.js';
import { toDesiredPod } from '../../../src/config/api/api-pods.js';
import { loadManifest } from '../../../src/config/manifest.js';
import type { StaticPod } from '../../../src/config/types.js';
import { connectRuntime, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { listRuntimePods } from '../../../src/kuberuntime/runtime-pods.js';
import { createLogger } from '../../../src/log/logger.js';
import { PodCache } from '../../../src/pleg/pod-cache.js';
import { RuntimeReader } from '../../../src/pleg/runtime-reader.js';
import type { PodEvent, PodWorkerObserver } from '../../../src/podworkers/observer.js';
import { PodWorkers } from '../../../src/podworkers/pod-workers.js';
import { StatusManager } from '../../../src/status/status-manager.js';
import { statusObserver } from '../../../src/status/worker-events.js';
import { InMemoryPodObjects, service } from '../../support/in-memory-pod-objects.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const NODE = 'node-env';
const NODE_IP = '127.0.0.1';
const NS = 'apps';
/** Longer than any wait below: only a wake or the error retry can start a waiting container. */
const SYNC_FREQUENCY_MS = 300_000;
const tmp = useTmpDir('env-objects');
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });

let cd: PrivateContainerd;
let cri: RuntimeConnection;
let workers: PodWorkers;
let status: StatusManager;
let reader: RuntimeReader;
const objects = new InMemoryPodObjects();
const events: PodEvent[] = [];

const sh = (script: string): string => JSON.stringify(['sh', '-c', script]);
const LOOP = sh("trap 'exit 0' TERM; while true; do sleep 1; done");

/**
 * A pod as the API server hands it over: defaulted (by the manifest loader, which refuses the
 * references a static pod may not have, so they are added after), in namespace `apps`, source `api`.
 */
function apiPod(name: string, refs: Pick<Container, 'env' | 'envFrom'>): StaticPod {
  const yaml = `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: app, image: ${TEST_IMAGES.busybox}, imagePullPolicy: IfNotPresent, command: ${LOOP}}\n`;
  const r = loadManifest(path.join(tmp, `${name}.yaml`), yaml, NODE, new Date());
  if ('error' in r) throw new Error(r.error.message);
  const uid = `e2e0e2e0-0000-4000-8000-${Buffer.from(name).toString('hex').padEnd(12, '0').slice(0, 12)}`;
  const spec = r.pod.pod.spec!;
  const p = {
    ...r.pod.pod,
    metadata: { ...r.pod.pod.metadata, name, namespace: NS, uid },
    spec: { ...spec, containers: spec.containers.map((c) => ({ ...c, ...refs })) },
  };
  const d = toDesiredPod(p, NODE, new Date());
  if (!('pod' in d)) throw new Error(d.refused);
  return d.pod;
}

async function statusWhen(pod: StaticPod, pred: (s: PodStatus) => boolean, what: string): Promise<PodStatus> {
  return waitFor(
    async () => {
      // No PLEG in this wiring: read the runtime into the cache as its relist would.
      await reader.refreshPod(pod.uid);
      status.update(pod.uid);
      const s = status.get(pod.uid)?.status;
      return s && pred(s) ? s : undefined;
    },
    { timeoutMs: 60_000, intervalMs: 250, what },
  );
}

async function runningContainerId(pod: StaticPod, name: string): Promise<string> {
  return waitFor(
    async () => {
      const p = (await listRuntimePods(cri.runtime)).get(pod.uid);
      return p?.containers.find((c) => c.name === name && c.state === ContainerState.CONTAINER_RUNNING)?.id;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `${pod.key} ${name} running` },
  );
}

async function envIn(containerId: string): Promise<Map<string, string>> {
  const r = await cri.runtime.execSync(containerId, ['env'], 10);
  const out = new Map<string, string>();
  for (const line of Buffer.from(r.stdout).toString('utf8').split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return out;
}

beforeAll(async () => {
  await cleanupStaleContainerds();
  cd = await startContainerd({ name: 'env-objects' });
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
    podObjects: objects,
  });
  const observers: PodWorkerObserver[] = [{ podEvent: (e) => events.push(e) }];
  reader = new RuntimeReader(cri.runtime, new PodCache());
  workers = new PodWorkers({
    runtime: podRuntime,
    logger,
    syncFrequencyMs: SYNC_FREQUENCY_MS,
    observers,
    cache: reader,
  });
  status = new StatusManager({
    runtimePod: (uid) => reader.cache.get(uid).pod,
    pods: () => workers.snapshot(),
    probes: { ready: () => undefined, started: () => undefined },
    nodeIP: NODE_IP,
    runtimeName: cri.version.runtimeName,
    logger,
  });
  observers.push(statusObserver(status));
  // What the wiring does with a PodObjects: a changed object wakes the workers of the pods that refer to it.
  objects.onChange((uids) => uids.forEach((u) => workers.wake(u)));
  workers.start(() => false);
  objects.putService(service('default', 'kubernetes', '10.96.0.1', [{ port: 443, name: 'https' }]));
  objects.putService(service(NS, 'db', '10.96.0.20', [{ port: 5432 }]));
});

afterAll(async () => {
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

describe('env from API objects in a real container', () => {
  it('has the ConfigMap, Secret and service variables the kubelet would give it', async () => {
    objects.putConfigMap(NS, 'app-config', { LEVEL: 'debug', MODE: 'fast' });
    objects.putSecret(NS, 'app-secret', { password: 'hunter2' });
    const pod = apiPod('reader', {
      envFrom: [{ configMapRef: { name: 'app-config' }, prefix: 'CFG_' }],
      env: [
        { name: 'LEVEL', valueFrom: { configMapKeyRef: { name: 'app-config', key: 'LEVEL' } } },
        { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'app-secret', key: 'password' } } },
        { name: 'DSN', value: 'postgres://$(DB_SERVICE_HOST):$(DB_SERVICE_PORT)/$(CFG_MODE)' },
      ],
    });
    objects.registerPod(pod.pod);
    workers.apply({ op: 'ADD', pod });
    const env = await envIn(await runningContainerId(pod, 'app'));
    expect(
      Object.fromEntries(
        [...env].filter(([k]) =>
          /^(CFG_|LEVEL$|PASSWORD$|DSN$|KUBERNETES_SERVICE_|KUBERNETES_PORT$|DB_SERVICE_HOST$)/.test(k),
        ),
      ),
    ).toEqual({
      CFG_LEVEL: 'debug',
      CFG_MODE: 'fast',
      LEVEL: 'debug',
      PASSWORD: 'hunter2',
      DSN: 'postgres://10.96.0.20:5432/fast',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBERNETES_SERVICE_PORT_HTTPS: '443',
      KUBERNETES_PORT: 'tcp://10.96.0.1:443',
      DB_SERVICE_HOST: '10.96.0.20',
    });
  });

  it('waits in CreateContainerConfigError while the ConfigMap is missing, and starts once it appears', async () => {
    const pod = apiPod('waiter', {
      env: [{ name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'late-config', key: 'greeting' } } }],
    });
    objects.registerPod(pod.pod);
    workers.apply({ op: 'ADD', pod });
    const waiting = await statusWhen(
      pod,
      (s) => s.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError',
      'waiter in CreateContainerConfigError',
    );
    expect(waiting.containerStatuses?.[0]?.state?.waiting?.message).toBe('configmap "late-config" not found');
    const failed = await waitFor(
      () => events.find((e) => e.uid === pod.uid && e.type === 'Warning' && e.reason === 'Failed'),
      { timeoutMs: 10_000, what: 'Failed event' },
    );
    expect(failed.message).toBe('Error: configmap "late-config" not found');
    expect(failed.container).toBe('app');
    expect((await listRuntimePods(cri.runtime)).get(pod.uid)?.containers ?? []).toEqual([]);

    // The object appears: its change wakes the worker, which starts the container with the value.
    objects.putConfigMap(NS, 'late-config', { greeting: 'hello' });
    const env = await envIn(await runningContainerId(pod, 'app'));
    expect(env.get('GREETING')).toBe('hello');
    await statusWhen(pod, (s) => s.containerStatuses?.[0]?.state?.running !== undefined, 'waiter running');
  });
});

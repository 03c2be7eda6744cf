// An API pod with an image volume (KEP-4639), created with kubectl through the fake API server, on
// containerd 2.1: it runs with the image's files at the mount, read-only; the volume's image is told
// in the pod's events as the kubelet's image manager tells it. One with a subPath on the image volume,
// which containerd 2.1 would drop, is Failed at admission with PodFeatureUnsupported and a Warning
// event, and nothing of it runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importVolumeDataImage, VOLUME_DATA_FILES, VOLUME_DATA_IMAGE } from '../../../dev/volume-images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { busyboxApiPod } from '../../support/busybox-pod.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'imgvol-api-e2e';
const h = useAgentHarness('image-volumes-api', NODE, { extraArgs: ['--v=2'] }, () => ({ version: '2.1' }));
let api: FakeApiServer;
let kubectl: Kubectl;

interface ApiEvent {
  reason?: string;
  message?: string;
  type?: string;
  involvedObject?: { name?: string; fieldPath?: string };
}

const apiPod = (name: string, mounts: object[]): string =>
  busyboxApiPod(name, NODE, {
    spec: { volumes: [{ name: 'data', image: { reference: VOLUME_DATA_IMAGE, pullPolicy: 'IfNotPresent' } }] },
    container: { volumeMounts: mounts },
  });

async function runningPod(name: string): Promise<RuntimePod | undefined> {
  const runtime = h.cri().runtime;
  for (const listed of (await listRuntimePods(runtime)).values()) {
    if (listed.name !== name || listed.namespace !== 'kube-system') continue;
    const p = await readRuntimePod(runtime, listed.uid);
    if (p?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING)) return p;
  }
  return undefined;
}

const eventsOf = (name: string): ApiEvent[] =>
  (api.objects('events', 'kube-system') as unknown as ApiEvent[]).filter((e) => e.involvedObject?.name === name);

beforeAll(async () => {
  await importVolumeDataImage(h.cd());
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, [
    'system:nodes',
  ]);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  h.launch({ extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`] });
  await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 60_000, what: 'the Node registered' });
}, 300_000);

afterAll(async () => {
  await api?.dispose();
});

describe('an API pod with an image volume on containerd 2.1', () => {
  it("runs with the image's files at the mount, read-only, and the volume's image in its events", async () => {
    await kubectl.ok(['create', '-f', '-'], 60_000, apiPod('models', [{ name: 'data', mountPath: '/data' }]));
    const p = await waitFor(() => runningPod('models'), { timeoutMs: 90_000, what: 'models running' });
    const id = p.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING)!.id;
    const r = await h.cri().runtime.execSync(id, ['cat', '/data/models/v1/weights.txt'], 10);
    expect(Buffer.from(r.stdout).toString()).toBe(VOLUME_DATA_FILES['models/v1/weights.txt']);
    const w = await h.cri().runtime.execSync(id, ['sh', '-c', 'echo x > /data/new'], 10);
    expect(w.exitCode).not.toBe(0);
    expect(Buffer.from(w.stderr).toString()).toContain('Read-only file system');
    await waitFor(() => api.pod('kube-system', 'models')?.status?.phase === 'Running', {
      timeoutMs: 60_000,
      what: 'models Running in the API',
    });
    const pulled = await waitFor(
      () => eventsOf('models').find((e) => e.reason === 'Pulled' && (e.message ?? '').includes(VOLUME_DATA_IMAGE)),
      { timeoutMs: 60_000, what: "the volume image's Pulled event" },
    );
    expect(pulled.message).toBe(`Container image "${VOLUME_DATA_IMAGE}" already present on machine`);
    // The pod's, as the kubelet's image manager names the pod for an image volume: no container field.
    expect(pulled.involvedObject?.fieldPath ?? '').toBe('');
  });

  it('one with a subPath on the image volume: Failed, PodFeatureUnsupported, a Warning event, nothing run', async () => {
    await kubectl.ok(
      ['create', '-f', '-'],
      60_000,
      apiPod('models-sub', [{ name: 'data', mountPath: '/model', subPath: 'models/v1' }]),
    );
    const status = await waitFor(
      () => {
        const s = api.pod('kube-system', 'models-sub')?.status;
        return s?.phase === 'Failed' ? s : undefined;
      },
      { timeoutMs: 60_000, what: 'models-sub Failed' },
    );
    const words =
      'spec.containers[0].volumeMounts[0].subPath: Pod requires node features that are not available: ImageVolume';
    expect(status).toMatchObject({ reason: 'PodFeatureUnsupported', message: `Pod was rejected: ${words}` });
    const warning = await waitFor(() => eventsOf('models-sub').find((e) => e.reason === 'PodFeatureUnsupported'), {
      timeoutMs: 60_000,
      what: 'the Warning event',
    });
    expect(warning).toMatchObject({ type: 'Warning' });
    expect(await runningPod('models-sub')).toBeUndefined();
  });
});

// Image volumes (KEP-4639) end to end: static pods on a standalone packaged agent over containerd 2.1,
// which mounts images (CRI Mount.image) but drops image_sub_path. The volume's image is
// dev/volume-images.ts' data-only image: its files are read through the mount, which is read-only
// whatever the volumeMount says, at two paths; a subPath of an image volume is refused at admission
// (containerd 2.1 would mount the image's root there; 2.2 reads it, and no 2.2 is packaged for this
// machine: the mount's image_sub_path is unit-tested); an image that cannot be pulled holds the
// container with ErrImagePull then ImagePullBackOff naming that image. The refusal where the runtime
// cannot mount images at all is image-volumes-refused.test.ts (containerd 1.6).
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { importVolumeDataImage, VOLUME_DATA_FILES, VOLUME_DATA_IMAGE } from '../../../dev/volume-images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import type { RunningAgent } from '../../support/agent.js';
import { freePort } from '../../support/ports.js';
import { readOnlyPods } from '../../support/read-only-pods.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-imgvol';
const h = useAgentHarness('image-volumes', NODE, {}, () => ({ version: '2.1' }));
let agent: RunningAgent;
let readOnlyPort: number;

const imageVolume = (reference: string, policy: string, mounts: string): string =>
  `    volumeMounts: [${mounts}]
  volumes: [{name: data, image: {reference: ${reference}, pullPolicy: ${policy}}}]
`;

async function apiView(name: string): Promise<Pod | undefined> {
  return (await readOnlyPods(readOnlyPort)).items.find((p) => p.metadata?.name === `${name}-${NODE}`);
}

async function containerStatus(name: string): Promise<ContainerStatus | undefined> {
  return (await apiView(name))?.status?.containerStatuses?.find((c) => c.name === 'main');
}

async function runningId(name: string): Promise<string | undefined> {
  for (const p of await h.pods(name)) {
    const c = p.containers.find((x) => x.name === 'main' && x.state === ContainerState.CONTAINER_RUNNING);
    if (c) return c.id;
  }
  return undefined;
}

async function waitingWith(name: string, reason: string): Promise<{ reason?: string; message?: string }> {
  return waitFor(
    async () => {
      const w = (await containerStatus(name))?.state?.waiting;
      return w?.reason === reason ? w : undefined;
    },
    { timeoutMs: 90_000, what: `${name} waiting with ${reason}` },
  );
}

async function exec(id: string, cmd: string[]): Promise<{ code: number; out: string }> {
  const r = await h.cri().runtime.execSync(id, cmd, 10);
  return { code: r.exitCode, out: Buffer.from(r.stdout).toString() + Buffer.from(r.stderr).toString() };
}

beforeAll(async () => {
  await importVolumeDataImage(h.cd());
  readOnlyPort = await freePort();
  agent = h.launch({ readOnlyPort, extraArgs: ['--v=2'] });
  h.write(
    'imgvol.yaml',
    busyboxPod(
      'imgvol',
      SLEEP_LOOP,
      imageVolume(
        VOLUME_DATA_IMAGE,
        'Never',
        '{name: data, mountPath: /data, readOnly: false}, {name: data, mountPath: /again, readOnly: true}',
      ),
    ),
  );
  h.write(
    'imgvol-subpath.yaml',
    busyboxPod(
      'imgvol-subpath',
      SLEEP_LOOP,
      imageVolume(
        VOLUME_DATA_IMAGE,
        'IfNotPresent',
        '{name: data, mountPath: /data}, {name: data, mountPath: /model, subPath: models/v1}',
      ),
    ),
  );
  h.write(
    'imgvol-unpullable.yaml',
    busyboxPod(
      'imgvol-unpullable',
      SLEEP_LOOP,
      imageVolume('bootlet.invalid/models:1', 'IfNotPresent', '{name: data, mountPath: /data}'),
    ),
  );
}, 300_000);

describe('image volumes on containerd 2.1', () => {
  it("mounts the image's files, read-only although the volumeMount says readOnly: false, at each of its paths", async () => {
    const id = await waitFor(() => runningId('imgvol'), { timeoutMs: 90_000, what: 'imgvol running' });
    expect(await exec(id, ['cat', '/data/greeting.txt'])).toEqual({
      code: 0,
      out: VOLUME_DATA_FILES['greeting.txt'],
    });
    expect(await exec(id, ['cat', '/data/models/v1/weights.txt'])).toEqual({
      code: 0,
      out: VOLUME_DATA_FILES['models/v1/weights.txt'],
    });
    expect(await exec(id, ['cat', '/again/models/v1/README'])).toEqual({
      code: 0,
      out: VOLUME_DATA_FILES['models/v1/README'],
    });
    for (const target of ['/data/new', '/data/greeting.txt', '/data/models/v1/new', '/again/new']) {
      const w = await exec(id, ['sh', '-c', `echo x > ${target}`]);
      expect(w.code, target).not.toBe(0);
      expect(w.out, target).toContain('Read-only file system');
    }
    expect((await exec(id, ['cat', '/data/greeting.txt'])).out).toBe(VOLUME_DATA_FILES['greeting.txt']);
    // The image was found (pullPolicy: Never), told as the kubelet's image manager tells it, of the pod.
    const pulled = agent
      .records()
      .find(
        (r) =>
          r.msg === 'Event' &&
          r.pod === `kube-system/imgvol-${NODE}` &&
          r.reason === 'Pulled' &&
          String(r.message).includes(VOLUME_DATA_IMAGE),
      );
    expect(pulled?.message).toBe(`Container image "${VOLUME_DATA_IMAGE}" already present on machine`);
    expect((await containerStatus('imgvol'))?.ready).toBe(true);
  });

  it("a subPath of an image volume, which containerd 2.1 drops: Failed at admission, naming the mount's field", async () => {
    const status = await waitFor(
      async () => {
        const s = (await apiView('imgvol-subpath'))?.status;
        return s?.phase === 'Failed' ? s : undefined;
      },
      { timeoutMs: 60_000, what: 'imgvol-subpath Failed' },
    );
    expect(status).toMatchObject({
      reason: 'PodFeatureUnsupported',
      message:
        'Pod was rejected: spec.containers[0].volumeMounts[1].subPath: Pod requires node features that are not available: ImageVolume',
    });
    expect(await h.pods('imgvol-subpath')).toEqual([]);
  });

  it("an image volume whose image cannot be pulled: ErrImagePull, then ImagePullBackOff naming the volume's image", async () => {
    const pulled = await waitingWith('imgvol-unpullable', 'ErrImagePull');
    expect(pulled.message).toContain('bootlet.invalid/models:1');
    const backOff = await waitingWith('imgvol-unpullable', 'ImagePullBackOff');
    expect(backOff.message).toMatch(/^Back-off pulling image "bootlet\.invalid\/models:1": ErrImagePull: /);
    // The container's own image was never needed: nothing of it was created.
    expect((await h.pods('imgvol-unpullable')).flatMap((p) => p.containers)).toEqual([]);
    expect(agent.proc.exitCode).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import {
  ContainerState,
  CriError,
  PodSandboxState,
  type Container,
  type ContainerStatus,
  type PodSandbox,
  type PodSandboxStatus,
  type RuntimeService,
} from '../../../src/cri/cri-types.js';
import { criOutput } from '../../support/cri-messages.js';
import { containerAnnotations, containerLabels, sandboxLabels } from '../../../src/kuberuntime/labels.js';
import {
  listRuntimePods,
  readRuntimePod,
  readRuntimePods,
  warnInvalidIdentityOnce,
  type RuntimePod,
} from '../../../src/kuberuntime/runtime-pods.js';
import {
  configSourceOf,
  isStaticRuntimePod,
  madeByBootlet,
  podLabelsOf,
} from '../../../src/kuberuntime/static-source.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { UID, container, pod } from './fixtures.js';

const OTHER = 'ffffffffffffffffffffffffffffffff';

function sandbox(
  id: string,
  uid: string,
  createdAt: number,
  attempt: number,
  state: PodSandboxState = PodSandboxState.SANDBOX_READY,
): PodSandbox {
  const p = pod();
  p.metadata.uid = uid;
  return {
    id,
    metadata: { name: p.metadata.name, uid, namespace: p.metadata.namespace, attempt },
    state,
    createdAt,
    labels: sandboxLabels(p),
    annotations: {},
    runtimeHandler: '',
  };
}

function ctr(
  id: string,
  sandboxId: string,
  uid: string,
  name: string,
  createdAt: number,
  restartCount: number,
  state: ContainerState = ContainerState.CONTAINER_RUNNING,
): Container {
  const p = pod();
  p.metadata.uid = uid;
  return {
    id,
    podSandboxId: sandboxId,
    metadata: { name, attempt: restartCount },
    image: criOutput('ImageSpec', { image: 'bootlet.local/busybox:1.36' }),
    imageRef: 'sha256:bb',
    state,
    createdAt,
    labels: containerLabels(p, name),
    annotations: containerAnnotations(p, container({ name }), { hash: 'abc', restartCount, type: 'container' }),
  };
}

class FakeRuntime implements Partial<RuntimeService> {
  gone = new Set<string>();
  constructor(
    readonly sandboxes: PodSandbox[],
    readonly containers: Container[],
  ) {}
  listPodSandbox = async (f?: { labelSelector?: Record<string, string> }) =>
    this.sandboxes.filter((s) => matches(s.labels, f?.labelSelector));
  listContainers = async (f?: { labelSelector?: Record<string, string> }) =>
    this.containers.filter((c) => matches(c.labels, f?.labelSelector));
  podSandboxStatus = async (id: string): Promise<PodSandboxStatus> => {
    if (this.gone.has(id)) throw new CriError('PodSandboxStatus', 5, 'not found');
    const s = this.sandboxes.find((x) => x.id === id)!;
    return { ...s, network: { ip: '192.0.2.10', additionalIps: [{ ip: '2001:db8::10' }] } };
  };
  containerStatus = async (id: string): Promise<ContainerStatus> => {
    if (this.gone.has(id)) throw new CriError('ContainerStatus', 5, 'not found');
    const c = this.containers.find((x) => x.id === id)!;
    return {
      ...c,
      startedAt: c.createdAt + 1,
      finishedAt: 0,
      exitCode: 0,
      reason: '',
      message: '',
      mounts: [],
      logPath: '',
      resources: null,
      user: null,
    };
  };
}

function matches(labels: Record<string, string>, sel?: Record<string, string>): boolean {
  return Object.entries(sel ?? {}).every(([k, v]) => labels[k] === v);
}

function fake(): FakeRuntime {
  return new FakeRuntime(
    [
      sandbox('s-old', UID, 100, 0, PodSandboxState.SANDBOX_NOTREADY),
      sandbox('s-new', UID, 200, 1),
      sandbox('s-other', OTHER, 150, 0),
      { ...sandbox('foreign', UID, 300, 0), labels: { app: 'not-kubelet' } },
    ],
    [
      ctr('c-0', 's-old', UID, 'app', 110, 0, ContainerState.CONTAINER_EXITED),
      ctr('c-1', 's-new', UID, 'app', 210, 1),
      ctr('c-x', 's-other', OTHER, 'db', 160, 0),
      { ...ctr('foreign-c', 's-new', UID, 'x', 400, 0), labels: {} },
    ],
  );
}

describe('listRuntimePods', () => {
  it('groups kubelet-labelled objects by pod UID, newest first, ignores the rest', async () => {
    const pods = await listRuntimePods(fake() as unknown as RuntimeService);
    expect([...pods.keys()].sort()).toEqual([UID, OTHER].sort());
    const p = pods.get(UID)!;
    expect(p).toMatchObject({ uid: UID, name: 'web-node1', namespace: 'kube-system' });
    expect(p.sandboxes.map((s) => [s.id, s.attempt, s.state])).toEqual([
      ['s-new', 1, PodSandboxState.SANDBOX_READY],
      ['s-old', 0, PodSandboxState.SANDBOX_NOTREADY],
    ]);
    expect(p.containers.map((c) => [c.id, c.sandboxId, c.name, c.meta.restartCount, c.meta.hash, c.hasStatus])).toEqual(
      [
        ['c-1', 's-new', 'app', 1, 'abc', false],
        ['c-0', 's-old', 'app', 0, 'abc', false],
      ],
    );
  });
});

describe('listRuntimePods: what the handoff needs', () => {
  it('reads config.source, the pod labels and who made the pod from the newest sandbox and the containers', async () => {
    const f = fake();
    const newest = f.sandboxes.find((s) => s.id === 's-new')!;
    newest.labels = { ...newest.labels, component: 'etcd' };
    newest.annotations = { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': UID };
    f.sandboxes.find((s) => s.id === 's-old')!.annotations = { 'kubernetes.io/config.source': 'api' };
    f.containers.find((c) => c.id === 'c-x')!.annotations['bootlet.io/container.hash'] = 'abc';
    const pods = await listRuntimePods(f as unknown as RuntimeService);
    const p = pods.get(UID)!;
    expect([configSourceOf(p), podLabelsOf(p), madeByBootlet(p), isStaticRuntimePod(p)]).toEqual([
      'file',
      { component: 'etcd', tier: 'control-plane' },
      false,
      true,
    ]);
    const other = pods.get(OTHER)!;
    expect([configSourceOf(other), madeByBootlet(other), isStaticRuntimePod(other)]).toEqual([undefined, true, true]);
    newest.annotations = { 'kubernetes.io/config.source': 'api' };
    const apiPod = (await listRuntimePods(f as unknown as RuntimeService)).get(UID)!;
    expect(isStaticRuntimePod(apiPod)).toBe(false);
    // An agent that reads the API server owns what a kubelet ran from it.
    expect(isStaticRuntimePod(apiPod, new Set(['file', 'api']))).toBe(true);
    expect(isStaticRuntimePod(apiPod, new Set(['file', 'http']))).toBe(false);
  });

  it('leaves out objects whose identity labels cannot name a pod, and says so once per pod', async () => {
    const f = fake();
    const evil = (s: PodSandbox, labels: Record<string, string>): PodSandbox => ({
      ...s,
      id: `${s.id}-evil`,
      labels: { ...s.labels, ...labels },
    });
    const base = f.sandboxes[1]!;
    f.sandboxes.push(
      evil(base, { 'io.kubernetes.pod.name': '../../../etc' }),
      evil(base, { 'io.kubernetes.pod.uid': 'a/b' }),
      evil(base, { 'io.kubernetes.pod.namespace': 'Kube_System' }),
      evil(base, { 'io.kubernetes.pod.uid': 'x'.repeat(37) }),
    );
    f.containers.push({
      ...f.containers[1]!,
      id: 'c-evil',
      labels: { ...f.containers[1]!.labels, 'io.kubernetes.pod.name': '../../../etc' },
    });
    const { logger, lines } = memoryLogger();
    const warn = warnInvalidIdentityOnce(logger);
    const pods = await listRuntimePods(f as unknown as RuntimeService, { invalidIdentity: warn });
    expect([...pods.keys()].sort()).toEqual([UID, OTHER].sort());
    expect(pods.get(UID)!.sandboxes.map((s) => s.id)).toEqual(['s-new', 's-old']);
    expect(pods.get(UID)!.containers.map((c) => c.id)).toEqual(['c-1', 'c-0']);
    // Four bad identities (the sandbox and the container of the first share one), each said once.
    await listRuntimePods(f as unknown as RuntimeService, { invalidIdentity: warn });
    const warned = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((r) => r.msg === 'Leaving runtime pod alone: its labels are not a valid pod identity');
    expect(warned.map((r) => [r.name, r.namespace, r.podUID])).toEqual([
      ['../../../etc', 'kube-system', UID],
      ['web-node1', 'kube-system', 'a/b'],
      ['web-node1', 'Kube_System', UID],
      ['web-node1', 'kube-system', 'x'.repeat(37)],
    ]);
    // A pod's own read never includes them either.
    const full = (await readRuntimePod(f as unknown as RuntimeService, UID))!;
    expect(full.sandboxes.map((s) => s.id)).toEqual(['s-new', 's-old']);
  });
});

describe('readRuntimePod', () => {
  it('reads statuses of the pod objects, skipping ones removed meanwhile', async () => {
    const f = fake();
    f.gone.add('c-0');
    const p = (await readRuntimePod(f as unknown as RuntimeService, UID))!;
    expect(p.sandboxes.map((s) => [s.id, s.ip, s.additionalIps])).toEqual([
      ['s-new', '192.0.2.10', ['2001:db8::10']],
      ['s-old', '192.0.2.10', ['2001:db8::10']],
    ]);
    expect(p.containers).toHaveLength(1);
    expect(p.containers[0]).toMatchObject({
      id: 'c-1',
      sandboxId: 's-new',
      startedAt: 211,
      hasStatus: true,
      imageRef: 'sha256:bb',
      meta: { type: 'container' },
    });
  });

  it('is undefined for a UID with nothing', async () => {
    expect(await readRuntimePod(fake() as unknown as RuntimeService, '0'.repeat(32))).toBeUndefined();
  });

  it('passes other errors on', async () => {
    const f = fake();
    f.containerStatus = async () => {
      throw new CriError('ContainerStatus', 14, 'unavailable');
    };
    await expect(readRuntimePod(f as unknown as RuntimeService, UID)).rejects.toThrow(
      'CRI ContainerStatus failed: unavailable',
    );
  });
});

describe('readRuntimePods with what was read before', () => {
  function counting(f: FakeRuntime): { calls: string[] } {
    const calls: string[] = [];
    const sandboxStatus = f.podSandboxStatus;
    const containerStatus = f.containerStatus;
    f.podSandboxStatus = (id) => (calls.push(id), sandboxStatus(id));
    f.containerStatus = (id) => (calls.push(id), containerStatus(id));
    return { calls };
  }

  it('asks for a status again only when the listed state changed', async () => {
    const f = fake();
    const { calls } = counting(f);
    const rt = f as unknown as RuntimeService;
    const first = await readRuntimePods(rt, { podUid: UID });
    expect(calls.sort()).toEqual(['c-0', 'c-1', 's-new', 's-old']);
    calls.length = 0;
    const previous = (uid: string): RuntimePod | undefined => first.get(uid);
    expect(await readRuntimePods(rt, { podUid: UID, previous })).toEqual(first);
    expect(calls).toEqual([]);
    // c-1 died: only its status is read again, and the pod shows it exited.
    f.containers.find((c) => c.id === 'c-1')!.state = ContainerState.CONTAINER_EXITED;
    const after = (await readRuntimePods(rt, { podUid: UID, previous })).get(UID)!;
    expect(calls).toEqual(['c-1']);
    expect(after.containers.find((c) => c.id === 'c-1')!.state).toBe(ContainerState.CONTAINER_EXITED);
  });

  it('never reuses an unknown state, and reads only the pod asked for', async () => {
    const f = fake();
    const { calls } = counting(f);
    const rt = f as unknown as RuntimeService;
    f.containers.find((c) => c.id === 'c-1')!.state = ContainerState.CONTAINER_UNKNOWN;
    const first = await readRuntimePods(rt, { podUid: UID });
    calls.length = 0;
    await readRuntimePods(rt, { podUid: UID, previous: (uid) => first.get(uid) });
    expect(calls).toEqual(['c-1']);
    const other = await readRuntimePods(rt, { podUid: OTHER });
    expect([...other.keys()]).toEqual([OTHER]);
  });
});

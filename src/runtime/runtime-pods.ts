// What runs, read back from the runtime and grouped by pod UID through the kubelet labels:
// the basis for adopting containers after a restart and for every sync.
import type { Container, ContainerStatus, KeyValueMap, PodSandbox, PodSandboxStatus, RuntimeService } from './cri-types.js';
import { ContainerState, CriError, PodSandboxState } from './cri-types.js';
import { parseContainerMeta, parseSandboxLabels, POD_UID_LABEL, type ContainerMeta, type SandboxIdentity } from './labels.js';
import { identityProblem } from './static-source.js';
import type { Logger } from '../log/logger.js';

export interface RuntimeSandbox {
  id: string;
  state: PodSandboxState;
  /** Nanoseconds since the epoch. */
  createdAt: number;
  attempt: number;
  /** From PodSandboxStatus; '' when read from a list or when the sandbox has no IP. */
  ip: string;
  additionalIps: string[];
  /** As the runtime lists them: the pod's labels plus the identity labels, the pod's annotations. */
  labels?: KeyValueMap;
  annotations?: KeyValueMap;
}

export interface RuntimeContainer {
  id: string;
  sandboxId: string;
  name: string;
  state: ContainerState;
  /** Nanoseconds since the epoch. */
  createdAt: number;
  /** The fields below come from ContainerStatus: getRuntimePod fills them, a list leaves 0 / ''. */
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  message: string;
  imageRef: string;
  /** The spec image as the runtime recorded it. */
  image: string;
  /** Whether the status fields were read (ContainerStatus) or are list defaults. */
  hasStatus: boolean;
  meta: ContainerMeta;
  /** Host file mounted at the termination message path (from ContainerStatus mounts); '' if unknown. */
  terminationMessageHostPath?: string;
  /** Absolute log path (from ContainerStatus); '' if unknown. */
  logPath?: string;
}

export interface RuntimePod {
  uid: string;
  name: string;
  namespace: string;
  /** Newest first. */
  sandboxes: RuntimeSandbox[];
  /** Newest first. */
  containers: RuntimeContainer[];
}

/** Newest first; ties broken by id so that the order is stable. */
function newestFirst<T extends { createdAt: number; id: string }>(xs: T[]): T[] {
  return xs.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

function sandboxFrom(s: PodSandbox | PodSandboxStatus): RuntimeSandbox {
  const network = 'network' in s ? s.network : undefined;
  return {
    id: s.id,
    state: s.state,
    createdAt: s.createdAt,
    attempt: s.metadata?.attempt ?? 0,
    ip: network?.ip ?? '',
    additionalIps: (network?.additionalIps ?? []).map((x) => x.ip),
    labels: s.labels,
    annotations: s.annotations,
  };
}

function containerFrom(c: Container | ContainerStatus, sandboxId: string, meta: ContainerMeta): RuntimeContainer {
  const st = 'startedAt' in c ? c : undefined;
  return {
    id: c.id,
    sandboxId,
    name: meta.containerName,
    state: c.state,
    createdAt: c.createdAt,
    startedAt: st?.startedAt ?? 0,
    finishedAt: st?.finishedAt ?? 0,
    exitCode: st?.exitCode ?? 0,
    reason: st?.reason ?? '',
    message: st?.message ?? '',
    imageRef: c.imageRef,
    image: c.image?.image ?? '',
    hasStatus: st !== undefined,
    meta,
    terminationMessageHostPath: st?.mounts?.find((m) => m.containerPath === (meta.terminationMessagePath || '/dev/termination-log'))?.hostPath,
    logPath: st?.logPath || undefined,
  };
}

function podEntry(pods: Map<string, RuntimePod>, uid: string, name: string, namespace: string): RuntimePod {
  let p = pods.get(uid);
  if (!p) {
    p = { uid, name, namespace, sandboxes: [], containers: [] };
    pods.set(uid, p);
  }
  return p;
}

export interface ListRuntimePodsOptions {
  /** Told about each object whose identity labels cannot be used (see identityProblem); it is left out. */
  invalidIdentity?(id: SandboxIdentity, problem: string): void;
}

/** The identity if it can be used; an object with unusable labels is never touched, so it is left out. */
function usable<T extends SandboxIdentity>(id: T | undefined, opts: ListRuntimePodsOptions): T | undefined {
  if (!id) return undefined;
  const problem = identityProblem(id);
  if (problem === undefined) return id;
  opts.invalidIdentity?.(id, problem);
  return undefined;
}

/** An invalidIdentity callback that warns once per identity (a pod's sandbox and containers share one). */
export function warnInvalidIdentityOnce(logger: Logger): NonNullable<ListRuntimePodsOptions['invalidIdentity']> {
  const told = new Set<string>();
  return (id, problem) => {
    const key = JSON.stringify([id.podNamespace, id.podName, id.podUid]);
    if (told.has(key)) return;
    told.add(key);
    logger.warn('Leaving runtime pod alone: its labels are not a valid pod identity', { namespace: id.podNamespace, name: id.podName, podUID: id.podUid, err: problem });
  };
}

/** Every kubelet-labelled pod, from one ListPodSandbox and one ListContainers (all states). */
export async function listRuntimePods(runtime: RuntimeService, opts: ListRuntimePodsOptions = {}): Promise<Map<string, RuntimePod>> {
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(), runtime.listContainers()]);
  const pods = new Map<string, RuntimePod>();
  for (const s of sandboxes) {
    const id = usable(parseSandboxLabels(s.labels), opts);
    if (id) podEntry(pods, id.podUid, id.podName, id.podNamespace).sandboxes.push(sandboxFrom(s));
  }
  for (const c of containers) {
    const meta = usable(parseContainerMeta(c.labels, c.annotations), opts);
    if (meta) podEntry(pods, meta.podUid, meta.podName, meta.podNamespace).containers.push(containerFrom(c, c.podSandboxId, meta));
  }
  for (const p of pods.values()) {
    newestFirst(p.sandboxes);
    newestFirst(p.containers);
  }
  return pods;
}

async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    // Removed between the list and the status call: as if it had not been listed.
    if (err instanceof CriError && err.notFound) return undefined;
    throw err;
  }
}

/**
 * The statuses the runtime last gave for each pod's sandboxes and containers. A status does not
 * change while its object stays in the same state (a running container's start time, image and
 * mounts are fixed; an exited one's exit code too), so it is asked for again only when the list
 * shows another state. That halves the calls of every periodic resync of an idle pod.
 */
export class RuntimeStatusCache {
  private readonly pods = new Map<string, { sandboxes: Map<string, PodSandboxStatus>; containers: Map<string, ContainerStatus> }>();

  sandbox(uid: string, s: PodSandbox): PodSandboxStatus | undefined {
    const st = this.pods.get(uid)?.sandboxes.get(s.id);
    return st && st.state === s.state ? st : undefined;
  }

  container(uid: string, c: Container): ContainerStatus | undefined {
    const st = this.pods.get(uid)?.containers.get(c.id);
    return st && st.state === c.state && st.state !== ContainerState.CONTAINER_UNKNOWN ? st : undefined;
  }

  /** Replaces what is kept for the pod: objects no longer listed are forgotten with it. */
  set(uid: string, sandboxes: PodSandboxStatus[], containers: ContainerStatus[]): void {
    if (sandboxes.length === 0 && containers.length === 0) this.pods.delete(uid);
    else this.pods.set(uid, { sandboxes: new Map(sandboxes.map((s) => [s.id, s])), containers: new Map(containers.map((c) => [c.id, c])) });
  }

  get size(): number {
    return this.pods.size;
  }
}

/**
 * One pod's full state (GetPodStatus): lists by the UID label, then the status of each object
 * (from `cache` when the object's state has not changed since).
 */
export async function getRuntimePod(runtime: RuntimeService, uid: string, cache?: RuntimeStatusCache): Promise<RuntimePod | undefined> {
  const selector = { labelSelector: { [POD_UID_LABEL]: uid } };
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(selector), runtime.listContainers(selector)]);
  const [sandboxStatuses, containerStatuses] = await Promise.all([
    Promise.all(sandboxes.map((s) => cache?.sandbox(uid, s) ?? ignoreNotFound(runtime.podSandboxStatus(s.id)))),
    Promise.all(containers.map((c) => cache?.container(uid, c) ?? ignoreNotFound(runtime.containerStatus(c.id)))),
  ]);
  cache?.set(
    uid,
    sandboxStatuses.filter((st) => st !== undefined),
    containerStatuses.filter((st) => st !== undefined),
  );
  const pods = new Map<string, RuntimePod>();
  sandboxStatuses.forEach((st) => {
    const id = st && usable(parseSandboxLabels(st.labels), {});
    if (st && id) podEntry(pods, uid, id.podName, id.podNamespace).sandboxes.push(sandboxFrom(st));
  });
  containerStatuses.forEach((st, i) => {
    const meta = st && usable(parseContainerMeta(st.labels, st.annotations), {});
    if (st && meta) podEntry(pods, uid, meta.podName, meta.podNamespace).containers.push(containerFrom(st, containers[i]!.podSandboxId, meta));
  });
  const pod = pods.get(uid);
  if (pod) {
    newestFirst(pod.sandboxes);
    newestFirst(pod.containers);
  }
  return pod;
}

// What runs, read back from the runtime and grouped by pod UID through the kubelet labels:
// the basis for adopting containers after a restart and for every sync.
import type {
  Container,
  ContainerStatus,
  KeyValueMap,
  PodSandbox,
  PodSandboxStatus,
  RuntimeService,
} from '../cri/cri-types.js';
import { ContainerState, CriError, PodSandboxState } from '../cri/cri-types.js';
import {
  identityProblem,
  parseContainerMeta,
  parseSandboxLabels,
  type ContainerMeta,
  type SandboxIdentity,
} from './labels.js';
import { POD_UID_LABEL } from '../k8s/cri-labels.js';
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
  /** Whether the status fields were read (PodSandboxStatus) or are list defaults. */
  hasStatus: boolean;
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
  /** The fields below come from ContainerStatus: readRuntimePods fills them, a list leaves 0 / ''. */
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
  /**
   * The cgroup limits the runtime applied (ContainerStatus.resources, updated by an in-place resize);
   * undefined when the runtime reports none (then a running container is never resized in place).
   */
  resources?: AppliedResources;
  /** The identities its first process started with, where the runtime reports them (ContainerStatus.user, KEP-3619). */
  user?: { uid: number; gid: number; supplementalGroups: number[] };
}

/** A container's cgroup limits as the runtime reports them. */
export interface AppliedResources {
  readonly cpuShares: number;
  readonly cpuQuota: number;
  readonly cpuPeriod: number;
  readonly memoryLimitInBytes: number;
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
export function newestFirst<T extends { createdAt: number; id: string }>(xs: T[]): T[] {
  return xs.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Running, or created and not started yet: an instance that holds its name in the pod and has to be stopped. */
export function isLiveContainer(c: Pick<RuntimeContainer, 'state'>): boolean {
  return c.state === ContainerState.CONTAINER_RUNNING || c.state === ContainerState.CONTAINER_CREATED;
}

/** Each container name's instances, newest first (by creation; the order given breaks a tie). */
export function instancesByName(containers: readonly RuntimeContainer[]): Map<string, RuntimeContainer[]> {
  const out = new Map<string, RuntimeContainer[]>();
  for (const c of containers) {
    const list = out.get(c.name);
    if (list) list.push(c);
    else out.set(c.name, [c]);
  }
  for (const list of out.values()) list.sort((a, b) => b.createdAt - a.createdAt);
  return out;
}

/** The newest instance of each container name: the one status, probes and restarts look at. */
export function newestByName(containers: readonly RuntimeContainer[]): Map<string, RuntimeContainer> {
  return new Map([...instancesByName(containers)].map(([name, list]) => [name, list[0]!]));
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
    hasStatus: 'network' in s,
    labels: s.labels,
    annotations: s.annotations,
  };
}

function appliedResources(st: ContainerStatus | undefined): AppliedResources | undefined {
  const l = st?.resources?.linux;
  if (!l) return undefined;
  return {
    cpuShares: l.cpuShares,
    cpuQuota: l.cpuQuota,
    cpuPeriod: l.cpuPeriod,
    memoryLimitInBytes: l.memoryLimitInBytes,
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
    terminationMessageHostPath: st?.mounts?.find(
      (m) => m.containerPath === (meta.terminationMessagePath || '/dev/termination-log'),
    )?.hostPath,
    logPath: st?.logPath || undefined,
    resources: appliedResources(st),
    ...(st?.user?.linux
      ? {
          user: {
            uid: Number(st.user.linux.uid),
            gid: Number(st.user.linux.gid),
            supplementalGroups: st.user.linux.supplementalGroups.map(Number),
          },
        }
      : {}),
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
    logger.warn('Leaving runtime pod alone: its labels are not a valid pod identity', {
      namespace: id.podNamespace,
      name: id.podName,
      podUID: id.podUid,
      err: problem,
    });
  };
}

/** Every kubelet-labelled pod, from one ListPodSandbox and one ListContainers (all states). */
export async function listRuntimePods(
  runtime: RuntimeService,
  opts: ListRuntimePodsOptions = {},
): Promise<Map<string, RuntimePod>> {
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(), runtime.listContainers()]);
  const pods = new Map<string, RuntimePod>();
  for (const s of sandboxes) {
    const id = usable(parseSandboxLabels(s.labels), opts);
    if (id) podEntry(pods, id.podUid, id.podName, id.podNamespace).sandboxes.push(sandboxFrom(s));
  }
  for (const c of containers) {
    const meta = usable(parseContainerMeta(c.labels, c.annotations), opts);
    if (meta)
      podEntry(pods, meta.podUid, meta.podName, meta.podNamespace).containers.push(
        containerFrom(c, c.podSandboxId, meta),
      );
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

export interface ReadOptions extends ListRuntimePodsOptions {
  /** Only this pod (a label selector on its UID): a read of what changed, where the CRI can filter. */
  readonly podUid?: string;
  /**
   * What was read before, by pod UID. An object whose listed state is the same as then keeps the
   * status read then: a status does not change while its object stays in one state (a running
   * container's start time, image and mounts are fixed; an exited one's exit code too), so an
   * unchanged pod costs no status call. UNKNOWN is always asked again.
   */
  readonly previous?: (uid: string) => RuntimePod | undefined;
  /** Pods to leave out of this read (asked once the lists are back): their objects are neither read nor returned. */
  readonly leaveOut?: (uid: string) => boolean;
}

/**
 * The full state of every kubelet-labelled pod (or of one): one ListPodSandbox and one
 * ListContainers, then a status call for each object whose state is new since `previous`.
 */
export async function readRuntimePods(
  runtime: RuntimeService,
  opts: ReadOptions = {},
): Promise<Map<string, RuntimePod>> {
  const filter = opts.podUid === undefined ? undefined : { labelSelector: { [POD_UID_LABEL]: opts.podUid } };
  const [sandboxes, containers] = await Promise.all([runtime.listPodSandbox(filter), runtime.listContainers(filter)]);
  const previousSandbox = (uid: string, id: string): RuntimeSandbox | undefined =>
    opts.previous?.(uid)?.sandboxes.find((s) => s.id === id);
  const previousContainer = (uid: string, id: string): RuntimeContainer | undefined =>
    opts.previous?.(uid)?.containers.find((c) => c.id === id);
  const pods = new Map<string, RuntimePod>();
  await Promise.all([
    ...sandboxes.map(async (s) => {
      const id = usable(parseSandboxLabels(s.labels), opts);
      if (!id || opts.leaveOut?.(id.podUid)) return;
      const prev = previousSandbox(id.podUid, s.id);
      let entry: RuntimeSandbox | undefined;
      if (prev && prev.hasStatus && prev.state === s.state) entry = prev;
      else {
        const st = await ignoreNotFound(runtime.podSandboxStatus(s.id));
        if (st) entry = sandboxFrom(st);
      }
      if (entry) podEntry(pods, id.podUid, id.podName, id.podNamespace).sandboxes.push(entry);
    }),
    ...containers.map(async (c) => {
      const meta = usable(parseContainerMeta(c.labels, c.annotations), opts);
      if (!meta || opts.leaveOut?.(meta.podUid)) return;
      const prev = previousContainer(meta.podUid, c.id);
      let entry: RuntimeContainer | undefined;
      if (prev && prev.hasStatus && prev.state === c.state && c.state !== ContainerState.CONTAINER_UNKNOWN)
        entry = prev;
      else {
        const st = await ignoreNotFound(runtime.containerStatus(c.id));
        const stMeta = st && usable(parseContainerMeta(st.labels, st.annotations), opts);
        if (st && stMeta) entry = containerFrom(st, c.podSandboxId, stMeta);
      }
      if (entry) podEntry(pods, meta.podUid, meta.podName, meta.podNamespace).containers.push(entry);
    }),
  ]);
  for (const p of pods.values()) {
    newestFirst(p.sandboxes);
    newestFirst(p.containers);
  }
  return pods;
}

/** One object of a pod, named by id: a sandbox, or a container with the sandbox it runs in. */
export type RuntimeObjectRef =
  | { readonly kind: 'sandbox'; readonly id: string }
  | { readonly kind: 'container'; readonly id: string; readonly sandboxId: string };

export type RuntimeObject =
  | { readonly kind: 'sandbox'; readonly identity: SandboxIdentity; readonly sandbox: RuntimeSandbox }
  | { readonly kind: 'container'; readonly identity: SandboxIdentity; readonly container: RuntimeContainer };

/**
 * One object's full state by its id: PodSandboxStatus or ContainerStatus, the call the kubelet's
 * GetPodStatus makes for it too. undefined when the runtime no longer has it (or its labels are
 * not a usable identity). A status carries everything a list entry does, so this is a complete
 * read of the object.
 */
export async function readRuntimeObject(
  runtime: RuntimeService,
  ref: RuntimeObjectRef,
  opts: ListRuntimePodsOptions = {},
): Promise<RuntimeObject | undefined> {
  if (ref.kind === 'sandbox') {
    const st = await ignoreNotFound(runtime.podSandboxStatus(ref.id));
    const identity = st && usable(parseSandboxLabels(st.labels), opts);
    return st && identity ? { kind: 'sandbox', identity, sandbox: sandboxFrom(st) } : undefined;
  }
  const st = await ignoreNotFound(runtime.containerStatus(ref.id));
  const meta = st && usable(parseContainerMeta(st.labels, st.annotations), opts);
  return st && meta
    ? { kind: 'container', identity: meta, container: containerFrom(st, ref.sandboxId, meta) }
    : undefined;
}

/** One pod's full state, read now (tests and tools; the agent reads through its pod cache). */
export async function readRuntimePod(runtime: RuntimeService, uid: string): Promise<RuntimePod | undefined> {
  return (await readRuntimePods(runtime, { podUid: uid })).get(uid);
}

// A RuntimeService fake for the PLEG: kubelet-labelled sandboxes and containers whose states a test
// changes, a count of relists, and a GetContainerEvents stream the test drives or refuses.
import {
  ContainerState,
  CriError,
  PodSandboxState,
  type Container,
  type ContainerEventResponse,
  type PodSandbox,
  type RuntimeService,
} from '../../../src/cri/cri-types.js';
import { criOutput } from '../../support/cri-messages.js';
import type { LabelledPod } from '../../../src/k8s/pod.js';
import { containerAnnotations, containerLabels, sandboxLabels } from '../../../src/kuberuntime/labels.js';

export function labelledPod(uid: string): LabelledPod {
  return { metadata: { name: `pod-${uid}`, namespace: 'default', uid }, spec: { containers: [] } };
}

export function sandbox(id: string, uid: string, state: PodSandboxState = PodSandboxState.SANDBOX_READY): PodSandbox {
  const p = labelledPod(uid);
  return {
    id,
    metadata: { name: p.metadata.name, uid, namespace: 'default', attempt: 0 },
    state,
    createdAt: 1,
    labels: sandboxLabels(p),
    annotations: {},
    runtimeHandler: '',
  };
}

export function container(
  id: string,
  sandboxId: string,
  uid: string,
  name: string,
  state: ContainerState = ContainerState.CONTAINER_RUNNING,
): Container {
  const p = labelledPod(uid);
  return {
    id,
    podSandboxId: sandboxId,
    metadata: { name, attempt: 0 },
    image: criOutput('ImageSpec', { image: 'bootlet.local/busybox:1.36' }),
    imageRef: 'sha256:bb',
    state,
    createdAt: 1,
    labels: containerLabels(p, name),
    annotations: containerAnnotations(
      p,
      { name, image: 'bootlet.local/busybox:1.36' },
      { hash: 'abc', restartCount: 0, type: 'container' },
    ),
  };
}

export type EventsMode = 'unimplemented' | 'open' | 'unavailable';

type EventsEnd = (err?: CriError) => void;

export class FakeRuntime {
  sandboxes: PodSandbox[] = [];
  containers: Container[] = [];
  lists = 0;
  /** Lists filtered by a label selector (one pod's read). */
  filteredLists = 0;
  /** PodSandboxStatus and ContainerStatus calls. */
  statusCalls = 0;
  failLists = false;
  /** Called at each list, before it answers: lets a test change state "in the runtime". */
  onList: (() => void) | undefined;
  /** The same at each status call (a read of one object by id). */
  onStatus: (() => void) | undefined;
  eventsMode: EventsMode = 'unimplemented';
  eventSubscriptions = 0;
  private push: ((e: ContainerEventResponse) => void) | undefined;
  private endStream: EventsEnd | undefined;

  setContainerState(id: string, state: ContainerState): void {
    this.containers = this.containers.map((c) => (c.id === id ? { ...c, state } : c));
  }

  setSandboxState(id: string, state: PodSandboxState): void {
    this.sandboxes = this.sandboxes.map((s) => (s.id === id ? { ...s, state } : s));
  }

  removeObject(id: string): void {
    this.containers = this.containers.filter((c) => c.id !== id);
    this.sandboxes = this.sandboxes.filter((s) => s.id !== id);
  }

  /** Delivers one CRI container event on the open stream. */
  sendEvent(e: ContainerEventResponse): void {
    this.push?.(e);
  }

  endEvents(err?: CriError): void {
    const end = this.endStream;
    this.push = this.endStream = undefined;
    end?.(err);
  }

  readonly service: RuntimeService = {
    listPodSandbox: async (f) => {
      this.lists++;
      if (f?.labelSelector) this.filteredLists++;
      this.onList?.();
      if (this.failLists) throw new CriError('ListPodSandbox', 14, 'runtime down');
      return this.sandboxes.filter((s) => selected(s.labels, f?.labelSelector)).map((s) => ({ ...s }));
    },
    listContainers: async (f) =>
      this.containers.filter((c) => selected(c.labels, f?.labelSelector)).map((c) => ({ ...c })),
    getContainerEvents: (onEvent, onEnd) => {
      this.eventSubscriptions++;
      if (this.eventsMode === 'open') {
        this.push = onEvent;
        this.endStream = onEnd;
      } else {
        const code = this.eventsMode === 'unimplemented' ? 12 : 14;
        setImmediate(() => onEnd(new CriError('GetContainerEvents', code, this.eventsMode)));
      }
      return { cancel: () => this.endEvents() };
    },
    version: unused,
    status: unused,
    statusWithHandlers: unused,
    statusInfo: unused,
    runtimeConfig: unused,
    updateRuntimeConfig: unused,
    runPodSandbox: unused,
    stopPodSandbox: unused,
    removePodSandbox: unused,
    podSandboxStatus: async (id) => {
      this.statusCalls++;
      this.onStatus?.();
      const sb = this.sandboxes.find((x) => x.id === id);
      if (!sb) throw new CriError('PodSandboxStatus', 5, 'not found');
      return { ...sb, network: { ip: '', additionalIps: [] } };
    },
    createContainer: unused,
    startContainer: unused,
    stopContainer: unused,
    removeContainer: unused,
    containerStatus: async (id) => {
      this.statusCalls++;
      this.onStatus?.();
      const c = this.containers.find((x) => x.id === id);
      if (!c) throw new CriError('ContainerStatus', 5, 'not found');
      return {
        ...c,
        startedAt: c.createdAt,
        finishedAt: 0,
        exitCode: 0,
        reason: '',
        message: '',
        mounts: [],
        logPath: '',
        resources: null,
        user: null,
      };
    },
    execSync: unused,
    updateContainerResources: unused,
    updatePodSandboxResources: unused,
    reopenContainerLog: unused,
    exec: unused,
    attach: unused,
    portForward: unused,
    listContainerStats: unused,
    listPodSandboxStats: unused,
    close: () => {},
  };
}

function selected(labels: Record<string, string>, sel: Record<string, string> | undefined): boolean {
  return Object.entries(sel ?? {}).every(([k, v]) => labels[k] === v);
}

function unused(): never {
  throw new Error('not used by the PLEG');
}

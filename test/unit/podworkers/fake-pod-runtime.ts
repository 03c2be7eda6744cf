// An in-memory PodRuntime: sandboxes and containers as a runtime would keep them, with hooks to
// make a call slow and a journal of calls in order.
import type { Container, LifecycleHandler } from 'kubernetes-types/core/v1';
import type { ContainerType } from '../../../src/podworkers/compute-actions.js';
import {
  ContainerStartError,
  type DesiredPod,
  type PodRuntime,
  type SandboxRef,
  type StartedContainer,
} from '../../../src/kuberuntime/pod-runtime.js';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import type { RuntimeContainer, RuntimePod, RuntimeSandbox } from '../../../src/kuberuntime/runtime-pods.js';
import type { PodCacheView } from '../../../src/podworkers/worker-context.js';
import { hashContainer, kubeletContainerHash } from '../../../src/kuberuntime/container-hash.js';
import { imageVolumesOf } from '../../../src/kuberuntime/image-volumes.js';

export class FakePodRuntime implements PodRuntime {
  readonly pods = new Map<string, RuntimePod>();
  readonly journal: string[] = [];
  /** Called before a container of this name starts; await it to make the start slow. */
  gate = new Map<string, Promise<void>>();
  /** Errors the next calls of an operation throw, one per call (faults of a real runtime). */
  readonly faults = new Map<string, Error[]>();
  private seq = 0;
  /** Images that cannot be pulled (startContainer fails with ErrImagePull), and every pull attempt. */
  readonly missingImages = new Set<string>();
  readonly pulls: string[] = [];
  /** Warnings a start reports, by container name (as envFrom keys it had to skip). */
  readonly startWarnings = new Map<string, Array<{ reason: string; message: string }>>();

  private fault(op: string): void {
    const e = this.faults.get(op)?.shift();
    if (e) {
      this.journal.push(`fault ${op}: ${e.message}`);
      throw e;
    }
  }

  private entry(pod: DesiredPod): RuntimePod {
    let p = this.pods.get(pod.metadata.uid);
    if (!p) {
      p = {
        uid: pod.metadata.uid,
        name: pod.metadata.name,
        namespace: pod.metadata.namespace,
        sandboxes: [],
        containers: [],
      };
      this.pods.set(pod.metadata.uid, p);
    }
    return p;
  }

  private find(id: string): { pod: RuntimePod; c?: RuntimeContainer; s?: RuntimeSandbox } | undefined {
    for (const pod of this.pods.values()) {
      const c = pod.containers.find((x) => x.id === id);
      if (c) return { pod, c };
      const s = pod.sandboxes.find((x) => x.id === id);
      if (s) return { pod, s };
    }
    return undefined;
  }

  /** Reads of one pod through the cache view, by pod UID. */
  readonly reads = new Map<string, number>();
  private clock = 0;
  /** When the PLEG (simulated by relist()) last read everything. */
  private fullAt = 0;
  private readonly readAt = new Map<string, number>();

  /** The pod cache as the workers see it, over this fake: a read when nothing newer is cached. */
  readonly cache: PodCacheView = {
    tick: () => ++this.clock,
    // This fake reads nothing for a creation: the next step's read of the pod shows it.
    creating: () => () => ++this.clock,
    stopping: () => () => {},
    // As if every pod had been seen: a worker's first sync reads its pod.
    has: () => true,
    getNewerThan: async (uid, t) => {
      // A PLEG that keeps up relists between any two steps.
      if (this.plegKeepsUp) this.fullAt = ++this.clock;
      const at = Math.max(this.readAt.get(uid) ?? 0, this.fullAt);
      if (at <= t) {
        this.fault('getPod');
        this.reads.set(uid, (this.reads.get(uid) ?? 0) + 1);
        this.readAt.set(uid, ++this.clock);
      }
      const p = this.pods.get(uid);
      return { pod: p ? structuredClone(p) : undefined, at: Math.max(this.readAt.get(uid) ?? 0, this.fullAt) };
    },
  };

  /** Simulates a PLEG whose relists always come between two steps of a worker. */
  plegKeepsUp = false;

  /** What the PLEG's relist does for the cache: every pod is read as of now. */
  relist(): void {
    this.fullAt = ++this.clock;
  }

  async createSandbox(pod: DesiredPod, attempt: number): Promise<SandboxRef> {
    this.fault('createSandbox');
    const id = `s${++this.seq}`;
    this.entry(pod).sandboxes.unshift({
      id,
      state: PodSandboxState.SANDBOX_READY,
      createdAt: ++this.seq,
      attempt,
      ip: '',
      additionalIps: [],
      hasStatus: true,
    });
    this.journal.push(`createSandbox ${pod.metadata.name} ${pod.metadata.uid}`);
    return { id, attempt, ip: '' };
  }

  async startContainer(
    pod: DesiredPod,
    sandbox: SandboxRef,
    container: Container,
    type: ContainerType,
    restartCount: number | undefined,
    restartedAt?: string,
  ): Promise<StartedContainer> {
    // As CriPodRuntime: the image volumes it mounts first, then its own image.
    const volumeImages = imageVolumesOf(pod, container).map((v) => v.image?.reference ?? '');
    for (const reference of volumeImages) {
      this.pulls.push(reference);
      if (this.missingImages.has(reference))
        throw new ContainerStartError(
          container.name,
          'ErrImagePull',
          `failed to pull image ${JSON.stringify(reference)}: not found`,
          'pull',
          reference,
        );
    }
    this.pulls.push(container.image ?? '');
    if (this.missingImages.has(container.image ?? ''))
      throw new ContainerStartError(
        container.name,
        'ErrImagePull',
        `failed to pull image ${JSON.stringify(container.image)}: not found`,
        'pull',
      );
    await this.gate.get(container.name);
    const id = `c${++this.seq}`;
    const now = Date.now() * 1e6;
    this.entry(pod).containers.unshift({
      id,
      sandboxId: sandbox.id,
      name: container.name,
      state: ContainerState.CONTAINER_RUNNING,
      createdAt: ++this.seq,
      startedAt: now,
      finishedAt: 0,
      exitCode: 0,
      reason: '',
      message: '',
      imageRef: 'sha256:x',
      image: container.image ?? '',
      hasStatus: true,
      meta: {
        podName: pod.metadata.name,
        podNamespace: pod.metadata.namespace,
        podUid: pod.metadata.uid,
        containerName: container.name,
        hash: kubeletContainerHash(container),
        specHash: hashContainer(container),
        restartCount: restartCount ?? 0,
        ...(restartedAt !== undefined ? { restartedAt } : {}),
        type,
      },
    });
    this.journal.push(`start ${pod.metadata.name} ${pod.metadata.uid} ${container.name}`);
    return {
      id,
      warnings: this.startWarnings.get(container.name),
      volumeImages: volumeImages.map((reference) => ({ reference })),
    };
  }

  async startCreatedContainer(id: string): Promise<void> {
    const f = this.find(id);
    if (f?.c) f.c.state = ContainerState.CONTAINER_RUNNING;
  }

  async runHook(
    _pod: DesiredPod | undefined,
    container: Container,
    containerId: string,
    handler: LifecycleHandler,
    timeoutSeconds: number,
  ): Promise<void> {
    this.journal.push(
      `hook ${container.name} ${containerId} ${JSON.stringify(handler.exec?.command ?? handler.sleep ?? handler.httpGet)} timeout=${timeoutSeconds}`,
    );
    if (handler.exec?.command?.[0] === 'false') throw new Error('hook failed');
  }

  async stopContainer(id: string, graceSeconds: number): Promise<void> {
    this.fault('stopContainer');
    const f = this.find(id);
    if (f?.c && f.c.state === ContainerState.CONTAINER_RUNNING) {
      f.c.state = ContainerState.CONTAINER_EXITED;
      f.c.finishedAt = Date.now() * 1e6;
      this.journal.push(`stop ${f.pod.name} ${f.pod.uid} ${f.c.name}`);
      this.graces.push(graceSeconds);
    }
  }
  readonly graces: number[] = [];

  async stopSandbox(id: string): Promise<void> {
    const f = this.find(id);
    if (f?.s) f.s.state = PodSandboxState.SANDBOX_NOTREADY;
  }

  async removeContainer(id: string): Promise<void> {
    this.fault('removeContainer');
    const f = this.find(id);
    if (f) f.pod.containers = f.pod.containers.filter((c) => c.id !== id);
  }

  async removeSandbox(id: string): Promise<void> {
    this.fault('removeSandbox');
    const f = this.find(id);
    if (f) f.pod.sandboxes = f.pod.sandboxes.filter((s) => s.id !== id);
  }

  async cleanupPod(uid: string): Promise<void> {
    this.fault('cleanupPod');
    const p = this.pods.get(uid);
    if (p && p.containers.length === 0 && p.sandboxes.length === 0) this.pods.delete(uid);
    this.journal.push(`cleanup ${uid}`);
  }

  /** Simulates a container dying on its own. */
  kill(uid: string, name: string, exitCode: number): void {
    const c = this.pods
      .get(uid)
      ?.containers.find((x) => x.name === name && x.state === ContainerState.CONTAINER_RUNNING);
    if (!c) throw new Error(`no running ${name} in ${uid}`);
    c.state = ContainerState.CONTAINER_EXITED;
    c.exitCode = exitCode;
    c.finishedAt = Date.now() * 1e6;
  }
}

// Decides, from what should run and what runs, the CRI actions one sync of a pod takes
// (the kubelet's computePodActions). Pure apart from the back-off reservation it is handed.
import type { Container, EphemeralContainer } from 'kubernetes-types/core/v1';
import { ContainerState, PodSandboxState } from '../cri/cri-types.js';
import {
  isLiveContainer,
  newestByName,
  type RuntimeContainer,
  type RuntimePod,
  type RuntimeSandbox,
} from '../kuberuntime/runtime-pods.js';
import type { BackOffDecision } from './crashloop-backoff.js';
import {
  containerShouldRestart,
  isRestartableInit as isSidecar,
  podRestartPolicy,
  restartsAfterProbeFailure,
  type PodRestartPolicy,
} from '../k8s/restart.js';

import type { ContainerType } from '../kuberuntime/labels.js';
import { RESTARTED_AT } from '../k8s/annotations.js';
import { resizeRestartMessage } from '../k8s/resize.js';
import type { LinuxContainerResources } from '../cri/cri-types.js';
import { changedResources, resizeNeedsRestart, type ContainerResize } from './resize-plan.js';

export type { ContainerType };

export interface ContainerToStart {
  readonly container: Container;
  readonly type: ContainerType;
  /** undefined: no earlier instance is known; the executor reads the log directory. */
  readonly restartCount: number | undefined;
  readonly why: string;
  /** The restart request the new container carries: the one asked now, else the one its predecessor carried. */
  readonly restartedAt?: string;
}

export interface EphemeralContainerToStart {
  readonly container: EphemeralContainer;
  /** The running instance of targetContainerName whose PID namespace it joins, when it names one. */
  readonly targetId?: string;
  readonly why: string;
}

export interface ContainerToKill {
  readonly id: string;
  readonly name: string;
  readonly why: string;
  /** The kubelet's reason when it is not a plain stop: LivenessProbe, StartupProbe. */
  readonly reason?: 'LivenessProbe' | 'StartupProbe';
  /** The probe's terminationGracePeriodSeconds, when it sets one; otherwise the pod's. */
  readonly graceSeconds?: number;
}

export interface WaitingReason {
  readonly reason: string;
  readonly message: string;
}

/** One step of a sync, named after the PodRuntime call that carries it out. */
export type PodAction =
  | ({ readonly kind: 'killContainer' } & ContainerToKill)
  | { readonly kind: 'stopSandbox'; readonly id: string }
  /** The pod needs a (new) sandbox; everything running is killed first. */
  | { readonly kind: 'createSandbox'; readonly attempt: number; readonly why: string }
  /** A container found CREATED with the right spec (an agent died between create and start). */
  | { readonly kind: 'startCreatedContainer'; readonly id: string; readonly name: string }
  | ({ readonly kind: 'startContainer' } & ContainerToStart)
  /** A debug container added through the API: started once in the pod's sandbox, never restarted. */
  | ({ readonly kind: 'startEphemeralContainer' } & EphemeralContainerToStart)
  /** A dead container instance no longer needed (the newest of each name is kept for lastState/logs). */
  /** An in-place resize of running containers and the pod cgroup (UpdateContainerResources). */
  | { readonly kind: 'resizePod'; readonly containers: readonly ContainerResize[] }
  | { readonly kind: 'removeContainer'; readonly id: string }
  | { readonly kind: 'removeSandbox'; readonly id: string };

export type PodActionKind = PodAction['kind'];
export type PodActionOf<K extends PodActionKind> = Extract<PodAction, { readonly kind: K }>;

export interface PodActions {
  /** In the kubelet's order: kills, sandbox stops, the new sandbox, starts, then garbage. */
  readonly actions: readonly PodAction[];
  /** Containers held back, e.g. CrashLoopBackOff, keyed by container name. */
  readonly waiting: Map<string, WaitingReason>;
  /** The earliest time a held-back container may start (ms since epoch). */
  readonly wakeAtMs?: number;
  /** Set when an init container failed and its policy (rules, its own, the pod's) does not restart it: the pod has failed for good. */
  readonly podFailed?: string;
  /** Set when running containers are killed for the restart request (the mirror's restartedAt): its value. */
  readonly restarting?: string;
}

/** The plan's actions of one kind, in order. */
export function actionsOf<K extends PodActionKind>(plan: PodActions, kind: K): PodActionOf<K>[] {
  return plan.actions.filter((a): a is PodActionOf<K> => a.kind === kind);
}

export interface ComputeInput {
  readonly uid: string;
  /** `<name>_<namespace>(<uid>)`, as the kubelet names a pod in messages. */
  readonly podDisplay?: string;
  readonly restartPolicy: string | undefined;
  readonly initContainers: readonly Container[];
  readonly containers: readonly Container[];
  /** spec.ephemeralContainers: each is started once, when no instance of it exists in any sandbox. */
  readonly ephemeralContainers?: readonly EphemeralContainer[];
  /** Whether a container instance was made from the current spec of the container of its name. */
  readonly specMatches: (inst: RuntimeContainer) => boolean;
  /** The probe that has failed (at its threshold) for this running container, if any: it must go. */
  readonly failedProbe?: (inst: RuntimeContainer) => 'liveness' | 'startup' | undefined;
  /**
   * The last restart asked through the API (the mirror pod's kubectl.kubernetes.io/restartedAt),
   * if any: a running container that does not carry this value is killed and started again.
   */
  readonly restartRequest?: string;
  /** Whether the image of this container is in its pull back-off, and until when. */
  readonly pullHold?: (
    container: Container,
  ) => { readonly notBefore: number; readonly reason: string; readonly message: string } | undefined;
  /**
   * The cgroup limits a container is to have, from its allocated resources; absent, nothing is
   * resized in place (a container whose runtime reports no limits is never resized either).
   */
  readonly wantedResources?: (container: Container) => LinuxContainerResources;
  readonly runtime: RuntimePod | undefined;
  readonly nowMs: number;
  /** Reserves a restart of a dead container, or says how long to wait (crash-loop back-off). */
  readonly admitRestart: (key: string, startedAtMs: number, finishedAtMs: number) => BackOffDecision;
}

const nsToMs = (ns: number): number => Math.floor(ns / 1e6);

/** The kubelet's words: `back-off 20s restarting failed container=app pod=app_ns(uid)`. */
function describeBackOff(name: string, delayMs: number, podDisplay: string): string {
  return `back-off ${Math.round(delayMs / 1000)}s restarting failed container=${name} pod=${podDisplay}`;
}

class ActionsBuilder {
  readonly stopSandboxes: string[] = [];
  readonly kill: ContainerToKill[] = [];
  readonly startCreated: { id: string; name: string }[] = [];
  readonly start: ContainerToStart[] = [];
  readonly startEphemeral: EphemeralContainerToStart[] = [];
  readonly resizes: ContainerResize[] = [];
  readonly waiting = new Map<string, WaitingReason>();
  wakeAtMs: number | undefined;
  podFailed: string | undefined;
  restarting: string | undefined;
  createSandbox: { attempt: number; why: string } | undefined;

  constructor(readonly input: ComputeInput) {}

  wakeAt(ms: number): void {
    this.wakeAtMs = this.wakeAtMs === undefined ? ms : Math.min(this.wakeAtMs, ms);
  }

  /**
   * A running container whose liveness (or startup) probe failed: killed, and restarted unless its
   * own restartPolicy, else the pod's, is Never (the kubelet's computePodActions), subject to the
   * crash-loop back-off.
   */
  killFailedProbe(
    container: Container,
    type: ContainerType,
    inst: RuntimeContainer,
    policy: PodRestartPolicy,
  ): boolean {
    const failed = this.input.failedProbe?.(inst);
    if (!failed) return false;
    const restart = restartsAfterProbeFailure(container, policy);
    const why = `Container ${container.name} failed ${failed} probe${restart ? ', will be restarted' : ''}`;
    const probe = failed === 'liveness' ? container.livenessProbe : container.startupProbe;
    this.kill.push({
      id: inst.id,
      name: container.name,
      why,
      reason: failed === 'liveness' ? 'LivenessProbe' : 'StartupProbe',
      graceSeconds: probe?.terminationGracePeriodSeconds,
    });
    if (restart) this.restartDead(container, type, inst, why);
    return true;
  }

  /**
   * A running container not yet restarted for the request the API carries: killed and started
   * again at once, as a failed liveness probe does, but with no crash-loop back-off (an operator
   * asked). The new container carries the value, so the same value never restarts it twice.
   */
  killForRestartRequest(container: Container, type: ContainerType, inst: RuntimeContainer): boolean {
    const value = this.input.restartRequest;
    if (value === undefined || inst.meta.restartedAt === value) return false;
    const why = `Container ${container.name} restart requested (${RESTARTED_AT}=${value}), will be restarted`;
    this.kill.push({ id: inst.id, name: container.name, why });
    this.start.push({ container, type, restartCount: inst.meta.restartCount + 1, why });
    this.restarting = value;
    return true;
  }

  /** Restart a dead instance unless the crash-loop back-off holds it back. Returns true if started. */
  restartDead(container: Container, type: ContainerType, dead: RuntimeContainer, why: string): boolean {
    const key = `${this.input.uid}/${container.name}`;
    const decision = this.input.admitRestart(key, nsToMs(dead.startedAt), nsToMs(dead.finishedAt) || this.input.nowMs);
    if (decision.notBefore !== undefined) {
      this.waiting.set(container.name, {
        reason: 'CrashLoopBackOff',
        message: describeBackOff(container.name, decision.delayMs ?? 0, this.input.podDisplay ?? this.input.uid),
      });
      this.wakeAt(decision.notBefore);
      return false;
    }
    this.start.push({ container, type, restartCount: dead.meta.restartCount + 1, why });
    return true;
  }
}

/** A finished (non-sidecar) init container of the current sandbox whose spec changed: the pod starts over. */
function initSpecChanged(input: ComputeInput, sandboxId: string): string | undefined {
  const specs = new Map(input.initContainers.map((c) => [c.name, c]));
  for (const c of input.runtime?.containers ?? []) {
    const spec = specs.get(c.name);
    if (!spec || isSidecar(spec) || c.sandboxId !== sandboxId || c.meta.type === 'container') continue;
    if (!input.specMatches(c)) return `init container ${c.name} spec changed`;
  }
  return undefined;
}

function sandboxNeeded(b: ActionsBuilder, input: ComputeInput, policy: PodRestartPolicy): RuntimeSandbox | undefined {
  const runtime = input.runtime;
  const sandboxes = runtime?.sandboxes ?? [];
  const newest = sandboxes[0];
  for (const s of sandboxes.slice(1)) if (s.state === PodSandboxState.SANDBOX_READY) b.stopSandboxes.push(s.id);
  const ready = newest && newest.state === PodSandboxState.SANDBOX_READY;
  const restartWhy = ready ? initSpecChanged(input, newest.id) : undefined;
  if (ready && !restartWhy) return newest;
  const ran = (runtime?.containers.length ?? 0) > 0;
  if (!ready && newest && policy === 'Never' && ran) return undefined; // a Never pod whose sandbox died stays dead
  b.createSandbox = {
    attempt: newest ? newest.attempt + 1 : 0,
    why: restartWhy ?? (newest ? 'sandbox is not ready' : 'no sandbox'),
  };
  // The dead sandbox is stopped too, so the runtime releases what it still holds (network, mounts).
  if (newest) b.stopSandboxes.push(newest.id);
  for (const c of runtime?.containers ?? [])
    if (isLiveContainer(c)) b.kill.push({ id: c.id, name: c.name, why: 'pod sandbox changed' });
  return undefined;
}

/** Everything the new sandbox will run: init containers first (in order), then the app containers. */
function planFreshSandbox(
  b: ActionsBuilder,
  input: ComputeInput,
  policy: PodRestartPolicy,
  newest: Map<string, RuntimeContainer>,
): void {
  const first = input.initContainers[0];
  if (first) {
    b.start.push({ container: first, type: 'init', restartCount: next(newest.get(first.name)), why: 'new sandbox' });
    return;
  }
  for (const c of input.containers) {
    const prev = newest.get(c.name);
    // OnFailure: containers that already succeeded are done, even in a new sandbox. The kubelet of 1.36
    // reads only the pod's policy here, not a container's own (kubernetes#141948 would change that).
    if (prev && policy === 'OnFailure' && prev.state === ContainerState.CONTAINER_EXITED && prev.exitCode === 0)
      continue;
    b.start.push({ container: c, type: 'container', restartCount: next(prev), why: 'new sandbox' });
  }
}

function next(prev: RuntimeContainer | undefined): number | undefined {
  return prev ? prev.meta.restartCount + 1 : undefined;
}

/**
 * Walks init containers in order. Returns true when every regular init container has succeeded
 * and every sidecar runs, so the app containers may run.
 */
function planInitContainers(
  b: ActionsBuilder,
  input: ComputeInput,
  policy: PodRestartPolicy,
  current: Map<string, RuntimeContainer>,
): boolean {
  for (const c of input.initContainers) {
    const inst = current.get(c.name);
    if (isSidecar(c)) {
      if (inst?.state === ContainerState.CONTAINER_RUNNING) {
        if (!input.specMatches(inst)) {
          b.kill.push({ id: inst.id, name: c.name, why: 'sidecar spec changed' });
          b.start.push({
            container: c,
            type: 'init',
            restartCount: inst.meta.restartCount + 1,
            why: 'sidecar spec changed',
          });
          return false;
        }
        if (b.killForRestartRequest(c, 'init', inst) || b.killFailedProbe(c, 'init', inst, policy)) return false;
        continue;
      }
      if (inst?.state === ContainerState.CONTAINER_CREATED && input.specMatches(inst)) {
        b.startCreated.push({ id: inst.id, name: c.name });
        return false;
      }
      if (!inst) b.start.push({ container: c, type: 'init', restartCount: undefined, why: 'not started' });
      else b.restartDead(c, 'init', inst, 'sidecar exited');
      return false;
    }
    if (!inst) {
      b.start.push({ container: c, type: 'init', restartCount: undefined, why: 'not started' });
      return false;
    }
    if (inst.state === ContainerState.CONTAINER_RUNNING) return false;
    if (inst.state === ContainerState.CONTAINER_CREATED) {
      if (input.specMatches(inst)) b.startCreated.push({ id: inst.id, name: c.name });
      else
        b.start.push({
          container: c,
          type: 'init',
          restartCount: inst.meta.restartCount + 1,
          why: 'init container spec changed',
        });
      return false;
    }
    if (inst.exitCode === 0) continue;
    if (!containerShouldRestart(c, policy, inst.exitCode)) {
      b.podFailed = `init container ${c.name} failed with exit code ${inst.exitCode}`;
      return false;
    }
    b.restartDead(c, 'init', inst, `init container exited with code ${inst.exitCode}`);
    return false;
  }
  return true;
}

function planAppContainers(
  b: ActionsBuilder,
  input: ComputeInput,
  policy: PodRestartPolicy,
  current: Map<string, RuntimeContainer>,
  newest: Map<string, RuntimeContainer>,
): void {
  for (const c of input.containers) {
    const inst = current.get(c.name);
    if (!inst) {
      // Never started in this sandbox; an instance from an older sandbox still carries the count.
      b.start.push({ container: c, type: 'container', restartCount: next(newest.get(c.name)), why: 'not started' });
      continue;
    }
    if (inst.state === ContainerState.CONTAINER_RUNNING) {
      if (!input.specMatches(inst)) {
        b.kill.push({ id: inst.id, name: c.name, why: 'container spec changed' });
        b.start.push({
          container: c,
          type: 'container',
          restartCount: inst.meta.restartCount + 1,
          why: 'container spec changed',
        });
      } else if (!b.killForRestartRequest(c, 'container', inst)) b.killFailedProbe(c, 'container', inst, policy);
      continue;
    }
    if (inst.state === ContainerState.CONTAINER_CREATED) {
      if (input.specMatches(inst)) b.startCreated.push({ id: inst.id, name: c.name });
      else
        b.start.push({
          container: c,
          type: 'container',
          restartCount: inst.meta.restartCount + 1,
          why: 'container spec changed',
        });
      continue;
    }
    if (!input.specMatches(inst)) {
      b.start.push({
        container: c,
        type: 'container',
        restartCount: inst.meta.restartCount + 1,
        why: 'container spec changed',
      });
      continue;
    }
    if (!containerShouldRestart(c, policy, inst.exitCode)) continue;
    b.restartDead(c, 'container', inst, `container exited with code ${inst.exitCode}`);
  }
}

/**
 * The kubelet's EphemeralContainersToStart: a debug container with no instance anywhere (it may have
 * run in an older sandbox: it is not started again), in spec order, before init containers finish.
 * One naming a target joins that container's PID namespace, so it waits until the target exists.
 */
function planEphemeralContainers(
  b: ActionsBuilder,
  input: ComputeInput,
  current: Map<string, RuntimeContainer>,
  newest: Map<string, RuntimeContainer>,
): void {
  for (const c of input.ephemeralContainers ?? []) {
    if (newest.has(c.name)) continue;
    const targetName = c.targetContainerName;
    if (!targetName) {
      b.startEphemeral.push({ container: c, why: 'ephemeral container added' });
      continue;
    }
    const target = current.get(targetName);
    if (!target || !isLiveContainer(target)) {
      b.waiting.set(c.name, {
        reason: 'CreateContainerConfigError',
        message: `unable to find target container ${targetName}`,
      });
      continue;
    }
    b.startEphemeral.push({ container: c, targetId: target.id, why: 'ephemeral container added' });
  }
}

/** Live containers the spec no longer names, or that live outside the current sandbox. */
function planStrays(b: ActionsBuilder, input: ComputeInput, sandboxId: string): void {
  const names = new Set(
    [...input.initContainers, ...input.containers, ...(input.ephemeralContainers ?? [])].map((c) => c.name),
  );
  for (const c of input.runtime?.containers ?? []) {
    if (!isLiveContainer(c)) continue;
    if (!names.has(c.name)) b.kill.push({ id: c.id, name: c.name, why: 'not in the pod spec' });
    else if (c.sandboxId !== sandboxId) b.kill.push({ id: c.id, name: c.name, why: 'belongs to an old sandbox' });
  }
}

/** Dead instances no longer needed, and dead sandboxes nothing refers to. */
function planGarbage(
  runtime: RuntimePod | undefined,
  keepSandbox: string | undefined,
  killed: Set<string>,
): { containers: string[]; sandboxes: string[] } {
  if (!runtime) return { containers: [], sandboxes: [] };
  // Keep the newest instance of each name and the newest dead one (lastState, `logs --previous`).
  const newest = newestByName(runtime.containers);
  const newestDead = newestByName(runtime.containers.filter((c) => !isLiveContainer(c)));
  const containers = runtime.containers
    .filter(
      (c) =>
        !isLiveContainer(c) &&
        !killed.has(c.id) &&
        newest.get(c.name)?.id !== c.id &&
        newestDead.get(c.name)?.id !== c.id,
    )
    .map((c) => c.id);
  const removed = new Set(containers);
  const referenced = new Set(runtime.containers.filter((c) => !removed.has(c.id)).map((c) => c.sandboxId));
  const sandboxes = runtime.sandboxes
    .filter((s) => s.id !== keepSandbox && s.state === PodSandboxState.SANDBOX_NOTREADY && !referenced.has(s.id))
    .map((s) => s.id);
  return { containers, sandboxes };
}

/**
 * Running regular containers and sidecars whose applied limits differ from their allocated ones:
 * updated in place, or killed and started again where their resizePolicy says RestartContainer.
 */
function planResizes(b: ActionsBuilder, input: ComputeInput, current: Map<string, RuntimeContainer>): void {
  const wanted = input.wantedResources;
  if (!wanted) return;
  const killed = new Set(b.kill.map((k) => k.id));
  const specs: [Container, ContainerType][] = [
    ...input.initContainers.filter((c) => isSidecar(c)).map((c): [Container, ContainerType] => [c, 'init']),
    ...input.containers.map((c): [Container, ContainerType] => [c, 'container']),
  ];
  for (const [spec, type] of specs) {
    const inst = current.get(spec.name);
    if (!inst || inst.state !== ContainerState.CONTAINER_RUNNING || !inst.resources || killed.has(inst.id)) continue;
    const want = wanted(spec);
    const changed = changedResources(inst.resources, want);
    if (changed.length === 0) continue;
    if (resizeNeedsRestart(spec, changed)) {
      const why = resizeRestartMessage(spec.name);
      b.kill.push({ id: inst.id, name: spec.name, why });
      b.start.push({ container: spec, type, restartCount: inst.meta.restartCount + 1, why });
    } else b.resizes.push({ id: inst.id, name: spec.name, wanted: want, actual: inst.resources, changed });
  }
}

export function computePodActions(input: ComputeInput): PodActions {
  const b = new ActionsBuilder(input);
  const policy = podRestartPolicy(input.restartPolicy);
  const all = input.runtime?.containers ?? [];
  const newest = newestByName(all);
  const sandbox = sandboxNeeded(b, input, policy);
  if (b.createSandbox) {
    planFreshSandbox(b, input, policy, newest);
  } else if (sandbox) {
    const current = newestByName(all.filter((c) => c.sandboxId === sandbox.id));
    planStrays(b, input, sandbox.id);
    planEphemeralContainers(b, input, current, newest);
    if (planInitContainers(b, input, policy, current)) planAppContainers(b, input, policy, current, newest);
    planResizes(b, input, current);
  }
  // An image in its pull back-off is not tried again before its time: the container waits.
  const started = b.start.map((s) => {
    const restartedAt = input.restartRequest ?? newest.get(s.container.name)?.meta.restartedAt;
    return restartedAt === undefined ? s : { ...s, restartedAt };
  });
  const notHeld = (c: Container | EphemeralContainer): boolean => {
    const hold = input.pullHold?.(c);
    if (!hold) return true;
    b.waiting.set(c.name, { reason: hold.reason, message: hold.message });
    b.wakeAt(hold.notBefore);
    return false;
  };
  const start = started.filter((s) => notHeld(s.container));
  const startEphemeral = b.startEphemeral.filter((s) => notHeld(s.container));
  const killed = new Set(b.kill.map((k) => k.id));
  // Without a sandbox to keep or make (a Never pod whose sandbox died) nothing is collected: what
  // the pod left stays for its status until it is removed.
  const garbage =
    sandbox || b.createSandbox ? planGarbage(input.runtime, sandbox?.id, killed) : { containers: [], sandboxes: [] };
  const actions: PodAction[] = [
    ...b.kill.map((k) => ({ kind: 'killContainer' as const, ...k })),
    ...b.stopSandboxes.map((id) => ({ kind: 'stopSandbox' as const, id })),
    ...(b.createSandbox ? [{ kind: 'createSandbox' as const, ...b.createSandbox }] : []),
    ...(b.resizes.length > 0 ? [{ kind: 'resizePod' as const, containers: b.resizes }] : []),
    ...b.startCreated.map((c) => ({ kind: 'startCreatedContainer' as const, ...c })),
    // The kubelet's SyncPod starts ephemeral containers before init and regular ones.
    ...startEphemeral.map((s) => ({ kind: 'startEphemeralContainer' as const, ...s })),
    ...start.map((s) => ({ kind: 'startContainer' as const, ...s })),
    ...garbage.containers.map((id) => ({ kind: 'removeContainer' as const, id })),
    ...(b.createSandbox ? [] : garbage.sandboxes).map((id) => ({ kind: 'removeSandbox' as const, id })),
  ];
  return {
    actions,
    waiting: b.waiting,
    wakeAtMs: b.wakeAtMs,
    podFailed: b.podFailed,
    ...(b.restarting !== undefined ? { restarting: b.restarting } : {}),
  };
}

export function isEmpty(a: PodActions): boolean {
  return a.actions.length === 0;
}

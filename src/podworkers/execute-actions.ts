// Carries out one sync's actions against the runtime, in the kubelet's order: kill what must go,
// make the sandbox, start containers in spec order, then collect garbage. One container failing
// to start does not stop the others; the errors are returned for the pod's status. Each action kind
// has its executor in EXECUTORS.
import type { PodAction, PodActionKind, PodActionOf, PodActions, WaitingReason } from './compute-actions.js';
import { containerSpec, killContainer, stopSandbox } from './kill-container.js';
import {
  ContainerStartError,
  type DesiredPod,
  type SandboxRef,
  type StartedContainer,
} from '../kuberuntime/pod-runtime.js';
import type { WorkerContext } from './worker-context.js';
import { CriError } from '../cri/cri-types.js';
import type { CacheTime } from '../pleg/pod-cache.js';
import type { CreationDone } from '../pleg/runtime-reader.js';
import type { Container } from 'kubernetes-types/core/v1';
import type { ContainerType } from '../kuberuntime/labels.js';
import { DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS } from '../k8s/defaults.js';
import { errorMessage } from '../util/error-message.js';

export interface ExecutionResult {
  readonly errors: string[];
  readonly waiting: Map<string, { reason: string; message: string }>;
}

/** One sync's execution: what its actions share. */
export interface Execution {
  readonly ctx: WorkerContext;
  readonly pod: DesiredPod;
  readonly fields: { readonly pod: string; readonly podUID: string };
  /** The pod's grace period, for a kill that does not bring its own. */
  readonly grace: number;
  /** The pod's sandbox: the ready one found, or the one this sync created. */
  sandbox: SandboxRef | undefined;
  readonly errors: string[];
  readonly waiting: Map<string, WaitingReason>;
  /** No more containers start in this sync: the pod is to go, or an init container failed. */
  startsHalted: boolean;
  /** The latest creation the cache was told of (see RuntimeReader.creating). */
  recordedAt: CacheTime | undefined;
  /** Something changed in the runtime that the cache was not told of: a kill, a removal, a failed creation. */
  unrecorded: boolean;
  /** The containers this sync's plan starts (a new sandbox looks up what they need while it is made). */
  readonly firstStarts: readonly Container[];
}

export interface ActionExecutor<A> {
  /** Runs together with the actions of its kind beside it (a pod's containers are stopped in parallel). */
  readonly parallel?: true;
  /** Without a sandbox the sync ends before this action (and everything after it). */
  readonly needsSandbox?: true;
  /** Only for a pod still wanted: once its removal is asked for, the sync ends before this action. */
  readonly wantedOnly?: true;
  run(x: Execution, action: A): Promise<void>;
}

/** One executor per action kind: a kind without one fails to compile. */
export type ActionExecutors<A extends { readonly kind: string } = PodAction> = {
  readonly [K in A['kind']]: ActionExecutor<Extract<A, { readonly kind: K }>>;
};

/** What a start needs, from a startContainer or a startEphemeralContainer action. */
interface StartRequest {
  readonly container: Container;
  readonly type: ContainerType;
  readonly restartCount: number | undefined;
  readonly restartedAt?: string;
  readonly targetId?: string;
  readonly why: string;
}

/** An ephemeral container starts once: restart count 0, in the target's PID namespace when it names one. */
function ephemeralStart(a: PodActionOf<'startEphemeralContainer'>): StartRequest {
  return { container: a.container, type: 'ephemeral', restartCount: 0, targetId: a.targetId, why: a.why };
}

async function startContainer(x: Execution, s: StartRequest): Promise<void> {
  const { ctx, pod, fields } = x;
  // The pod is to go (its manifest removed or replaced): start nothing more, as the kubelet
  // cancels a sync in flight. A pod of 1,500 containers whose image cannot be pulled kept its
  // worker (and a replacement of the same name) waiting while each pull failed in turn.
  if (ctx.termination !== undefined) x.startsHalted = true;
  const sandbox = x.sandbox;
  if (x.startsHalted || !sandbox) return;
  const name = s.container.name;
  ctx.emit((o) => o.containerStartAttempt?.(ctx.uid, s.type));
  // The cache hears of the creation from just before CreateContainer (an image pull may take minutes
  // before it, and nothing of the pod is made meanwhile).
  let done: CreationDone | undefined;
  const onCreate = (): void => {
    done = ctx.cache.creating(ctx.uid);
  };
  try {
    let started: StartedContainer;
    try {
      started = await ctx.runtime.startContainer(
        pod,
        sandbox,
        s.container,
        s.type,
        s.restartCount,
        s.restartedAt,
        onCreate,
        s.targetId,
      );
    } catch (err) {
      failedCreation(x, done);
      throw err;
    }
    // A runtime that made it without saying so (a fake): told now.
    recorded(x, (done ?? ctx.cache.creating(ctx.uid))([{ kind: 'container', id: started.id, sandboxId: sandbox.id }]));
    ctx.pullBackOff.succeeded(ctx.uid, s.container.image ?? '');
    for (const v of started.volumeImages ?? []) ctx.pullBackOff.succeeded(ctx.uid, v.reference);
    const pull = started.pullMs === undefined ? undefined : { pullMs: started.pullMs, pulledAtMs: ctx.now() };
    ctx.emit((o) => o.containerStarted?.(ctx.uid, s.type, pull));
    ctx.logger.info('Started container', { ...fields, container: name, containerID: started.id, reason: s.why });
    // An image volume's pull is the pod's (the kubelet's image manager names the pod, not a container).
    for (const v of started.volumeImages ?? []) imagePullEvents(ctx, v.reference, v.pullMs);
    imagePullEvents(ctx, s.container.image, started.pullMs, name);
    for (const w of started.warnings ?? []) ctx.event('Warning', w.reason, w.message);
    ctx.event('Normal', 'Created', `Created container: ${name}`, name);
    ctx.event('Normal', 'Started', `Started container ${name}`, name);
  } catch (err) {
    const reason = err instanceof ContainerStartError ? err.reason : 'RunContainerError';
    const message = errorMessage(err);
    x.waiting.set(name, { reason, message });
    if (err instanceof ContainerStartError && err.step === 'pull')
      ctx.pullBackOff.failed(ctx.uid, err.image ?? s.container.image ?? '', ctx.now(), message);
    ctx.emit((o) => o.containerStartFailed?.(ctx.uid, s.type, reason));
    x.errors.push(`${name}: ${message}`);
    ctx.logger.error('Failed to start container', { ...fields, container: name, reason, err: message });
    if (err instanceof ContainerStartError && err.step === 'mount') ctx.event('Warning', 'FailedMount', message, name);
    // As the kubelet's startContainer: a config that could not be made is told by its own message.
    else if (reason === 'CreateContainerConfigError') ctx.event('Warning', 'Failed', `Error: ${message}`, name);
    else ctx.event('Warning', 'Failed', `Error: ${reason}: ${message}`, name);
    // An init container must succeed before anything after it; stop here.
    if (s.type === 'init') x.startsHalted = true;
  }
}

/** Pulling and Pulled for an image, or that it was present; on the container when it is named. */
function imagePullEvents(
  ctx: WorkerContext,
  image: string | undefined,
  pullMs: number | undefined,
  container?: string,
) {
  if (pullMs !== undefined) {
    ctx.event('Normal', 'Pulling', `Pulling image ${JSON.stringify(image)}`, container);
    ctx.event(
      'Normal',
      'Pulled',
      `Successfully pulled image ${JSON.stringify(image)} in ${(pullMs / 1000).toFixed(3)}s`,
      container,
    );
  } else {
    ctx.event('Normal', 'Pulled', `Container image ${JSON.stringify(image)} already present on machine`, container);
  }
}

/** The error as the event says it: the runtime's own words for a CRI call it refused. */
function sandboxError(err: unknown): string {
  return err instanceof CriError ? err.details : errorMessage(err);
}

/** A creation that failed may have left something (a container created, not started): the next step reads the pod. */
function failedCreation(x: Execution, done: CreationDone | undefined): void {
  done?.([]);
  x.unrecorded = true;
}

function recorded(x: Execution, at: CacheTime): void {
  x.recordedAt = Math.max(x.recordedAt ?? at, at);
}

/** A change the cache is not told of (it is seen by the next step's read of the pod). */
function unrecorded<A>(run: (x: Execution, a: A) => Promise<void>): (x: Execution, a: A) => Promise<void> {
  return (x, a) => {
    x.unrecorded = true;
    return run(x, a);
  };
}

export const EXECUTORS: ActionExecutors = {
  killContainer: {
    parallel: true,
    run: unrecorded((x, k) =>
      killContainer(
        x.ctx,
        { id: k.id, name: k.name, spec: containerSpec(x.pod, k.name), podIP: x.sandbox?.ip },
        k.graceSeconds ?? x.grace,
        k.why,
      ),
    ),
  },
  stopSandbox: { run: unrecorded((x, a) => stopSandbox(x.ctx, a.id)) },
  createSandbox: {
    wantedOnly: true,
    async run(x, a) {
      // The cache is told of the new sandbox and reads it by id (the kubelet's SyncPod reads its
      // status right after RunPodSandbox too).
      const done = x.ctx.cache.creating(x.ctx.uid);
      try {
        x.sandbox = await x.ctx.runtime.createSandbox(x.pod, a.attempt, x.firstStarts);
      } catch (err) {
        failedCreation(x, done);
        // As the kubelet's SyncPod, unless the pod is already to go (its sandbox failing is no news then).
        if (x.ctx.termination === undefined)
          x.ctx.event('Warning', 'FailedCreatePodSandBox', `Failed to create pod sandbox: ${sandboxError(err)}`);
        throw err;
      }
      recorded(x, done([{ kind: 'sandbox', id: x.sandbox.id }]));
      x.ctx.logger.info('Created pod sandbox', {
        ...x.fields,
        sandboxID: x.sandbox.id,
        attempt: a.attempt,
        reason: a.why,
      });
    },
  },
  startCreatedContainer: {
    needsSandbox: true,
    run: unrecorded(async (x, c) => {
      await x.ctx.runtime.startCreatedContainer(c.id);
      x.ctx.logger.info('Started container', {
        ...x.fields,
        container: c.name,
        containerID: c.id,
        reason: 'found created, not started',
      });
    }),
  },
  startEphemeralContainer: { needsSandbox: true, run: (x, a) => startContainer(x, ephemeralStart(a)) },
  startContainer: { needsSandbox: true, run: startContainer },
  removeContainer: { run: unrecorded((x, a) => x.ctx.teardown(() => x.ctx.runtime.removeContainer(a.id))) },
  removeSandbox: { run: unrecorded((x, a) => x.ctx.teardown(() => x.ctx.runtime.removeSandbox(a.id))) },
};

function executorOf<K extends PodActionKind>(kind: K): ActionExecutor<PodActionOf<K>> {
  return EXECUTORS[kind];
}

export async function executeActions(
  ctx: WorkerContext,
  plan: PodActions,
  sandbox: SandboxRef | undefined,
): Promise<ExecutionResult> {
  const pod = ctx.desired;
  const errors: string[] = [];
  const waiting = new Map(plan.waiting);
  if (!pod) return { errors, waiting };
  const grace = pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  const firstStarts = plan.actions.flatMap((a) => (a.kind === 'startContainer' ? [a.container] : []));
  const x: Execution = {
    ctx,
    pod,
    fields: { pod: ctx.key, podUID: ctx.uid },
    grace,
    sandbox,
    errors,
    waiting,
    startsHalted: false,
    recordedAt: undefined,
    unrecorded: false,
    firstStarts,
  };
  try {
    await runActions(x, plan.actions);
  } finally {
    ctx.stepEffects =
      x.unrecorded || x.recordedAt === undefined ? { kind: 'unrecorded' } : { kind: 'recorded', at: x.recordedAt };
  }
  return { errors, waiting };
}

async function runActions(x: Execution, actions: readonly PodAction[]): Promise<void> {
  const ctx = x.ctx;
  for (let i = 0; i < actions.length;) {
    const executor = executorOf(actions[i].kind);
    if (executor.needsSandbox && !x.sandbox) break;
    // The pod left the desired set while this sync waited (its file removed during a flood): no
    // sandbox for a pod nobody wants; its worker stops it next.
    if (executor.wantedOnly && ctx.termination !== undefined) break;
    // A run of actions of a parallel kind goes at once; every other action waits for the one before.
    let end = i + 1;
    if (executor.parallel) while (end < actions.length && actions[end].kind === actions[i].kind) end++;
    if (end - i > 1) await Promise.all(actions.slice(i, end).map((a) => executorOf(a.kind).run(x, a)));
    else await executor.run(x, actions[i]);
    i = end;
  }
}

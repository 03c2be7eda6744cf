// Ephemeral containers in the plan: started once in the pod's sandbox (the target's PID namespace
// when they name one), never restarted, never killed as strays, not started in a fresh sandbox.
import type { Container, EphemeralContainer } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { actionsOf, computePodActions, type ComputeInput } from '../../../src/podworkers/compute-actions.js';
import { CrashLoopBackOff, KUBELET_BACKOFF } from '../../../src/podworkers/crashloop-backoff.js';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import type { RuntimeContainer, RuntimeSandbox } from '../../../src/kuberuntime/runtime-pods.js';

const UID = 'u1';
const NOW_MS = 1_000_000;

function sandbox(id: string, state: PodSandboxState = PodSandboxState.SANDBOX_READY, attempt = 0): RuntimeSandbox {
  return { id, state, createdAt: 1, attempt, ip: '', additionalIps: [], hasStatus: true };
}

function ctr(
  id: string,
  name: string,
  o: { sandboxId?: string; state?: ContainerState; exitCode?: number; type?: 'init' | 'container' | 'ephemeral' } = {},
): RuntimeContainer {
  return {
    id,
    sandboxId: o.sandboxId ?? 's1',
    name,
    state: o.state ?? ContainerState.CONTAINER_RUNNING,
    createdAt: 10,
    startedAt: 1e9,
    finishedAt: o.state === ContainerState.CONTAINER_EXITED ? 2e9 : 0,
    exitCode: o.exitCode ?? 0,
    reason: '',
    message: '',
    imageRef: 'sha256:x',
    image: 'img',
    hasStatus: true,
    meta: {
      podName: 'p',
      podNamespace: 'default',
      podUid: UID,
      containerName: name,
      hash: `h-${name}`,
      restartCount: 0,
      type: o.type,
    },
  };
}

const app: Container = { name: 'app', image: 'img' };
const debug = (extra: Partial<EphemeralContainer> = {}): EphemeralContainer => ({
  name: 'debugger',
  image: 'busybox',
  ...extra,
});

function input(
  ephemeralContainers: EphemeralContainer[],
  sandboxes: RuntimeSandbox[],
  containers: RuntimeContainer[],
  over: Partial<ComputeInput> = {},
): ComputeInput {
  const backoff = new CrashLoopBackOff();
  return {
    uid: UID,
    restartPolicy: 'Always',
    initContainers: [],
    containers: [app],
    ephemeralContainers,
    specMatches: (inst) => inst.meta.hash === `h-${inst.name}`,
    runtime: { uid: UID, name: 'p', namespace: 'default', sandboxes, containers },
    nowMs: NOW_MS,
    admitRestart: (key, s, f) => backoff.admit(key, s, f, NOW_MS, KUBELET_BACKOFF),
    ...over,
  };
}

describe('computePodActions: ephemeral containers', () => {
  it('starts an added ephemeral container in the running pod and leaves the app alone', () => {
    const plan = computePodActions(input([debug()], [sandbox('s1')], [ctr('c1', 'app')]));
    expect(plan.actions.map((a) => a.kind)).toEqual(['startEphemeralContainer']);
    expect(actionsOf(plan, 'startEphemeralContainer')[0]).toEqual({
      kind: 'startEphemeralContainer',
      container: debug(),
      why: 'ephemeral container added',
    });
  });

  it('joins the target container: its running instance in the current sandbox', () => {
    const plan = computePodActions(
      input(
        [debug({ targetContainerName: 'app' })],
        [sandbox('s2', PodSandboxState.SANDBOX_READY, 1), sandbox('s1', PodSandboxState.SANDBOX_NOTREADY)],
        [ctr('c2', 'app', { sandboxId: 's2' }), ctr('c1', 'app', { state: ContainerState.CONTAINER_EXITED })],
      ),
    );
    expect(actionsOf(plan, 'startEphemeralContainer')).toEqual([
      {
        kind: 'startEphemeralContainer',
        container: debug({ targetContainerName: 'app' }),
        targetId: 'c2',
        why: 'ephemeral container added',
      },
    ]);
  });

  it('waits, with the kubelet message, while the target does not run', () => {
    const plan = computePodActions(
      input(
        [debug({ targetContainerName: 'app' })],
        [sandbox('s1')],
        [ctr('c1', 'app', { state: ContainerState.CONTAINER_EXITED, exitCode: 1 })],
        { restartPolicy: 'Never' },
      ),
    );
    expect(actionsOf(plan, 'startEphemeralContainer')).toEqual([]);
    expect(plan.waiting.get('debugger')).toEqual({
      reason: 'CreateContainerConfigError',
      message: 'unable to find target container app',
    });
  });

  it('is started before init and app containers, in the kubelet order', () => {
    const plan = computePodActions(
      input([debug()], [sandbox('s1')], [], { initContainers: [{ name: 'init', image: 'img' }] }),
    );
    expect(plan.actions.map((a) => a.kind)).toEqual(['startEphemeralContainer', 'startContainer']);
  });

  it('is never restarted once it ran: exited, in this or an older sandbox', () => {
    const exited = ctr('e1', 'debugger', { state: ContainerState.CONTAINER_EXITED, exitCode: 1, type: 'ephemeral' });
    expect(computePodActions(input([debug()], [sandbox('s1')], [ctr('c1', 'app'), exited])).actions).toEqual([]);
    const older = ctr('e0', 'debugger', { sandboxId: 's0', state: ContainerState.CONTAINER_EXITED, type: 'ephemeral' });
    const plan = computePodActions(
      input(
        [debug()],
        [sandbox('s1', PodSandboxState.SANDBOX_READY, 1), sandbox('s0', PodSandboxState.SANDBOX_NOTREADY)],
        [ctr('c1', 'app'), older],
      ),
    );
    expect(actionsOf(plan, 'startEphemeralContainer')).toEqual([]);
  });

  it('is not killed as a container the spec does not name', () => {
    const plan = computePodActions(
      input([debug()], [sandbox('s1')], [ctr('c1', 'app'), ctr('e1', 'debugger', { type: 'ephemeral' })]),
    );
    expect(plan.actions).toEqual([]);
  });

  it('is not started in a new sandbox (the kubelet starts only init and app containers there)', () => {
    const plan = computePodActions(input([debug()], [], []));
    expect(plan.actions.map((a) => a.kind)).toEqual(['createSandbox', 'startContainer']);
  });

  it('waits for its image pull back-off as any container', () => {
    const hold = { notBefore: NOW_MS + 5000, reason: 'ImagePullBackOff', message: 'Back-off pulling image "busybox"' };
    const plan = computePodActions(
      input([debug()], [sandbox('s1')], [ctr('c1', 'app')], {
        pullHold: (c) => (c.image === 'busybox' ? hold : undefined),
      }),
    );
    expect(plan.actions).toEqual([]);
    expect(plan.waiting.get('debugger')).toEqual({ reason: hold.reason, message: hold.message });
    expect(plan.wakeAtMs).toBe(hold.notBefore);
  });
});

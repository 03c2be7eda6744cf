import type { Container } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import {
  actionsOf,
  computePodActions as plan,
  isEmpty,
  type ComputeInput,
  type PodActionKind,
  type PodActionOf,
  type PodActions,
} from '../../../src/podworkers/compute-actions.js';
import { CrashLoopBackOff, KUBELET_BACKOFF } from '../../../src/podworkers/crashloop-backoff.js';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import type { RuntimeContainer, RuntimePod, RuntimeSandbox } from '../../../src/kuberuntime/runtime-pods.js';

const UID = 'u1';
const S = 1e9; // ns per second
const NOW_MS = 1_000_000;

function sandbox(
  id: string,
  state: PodSandboxState = PodSandboxState.SANDBOX_READY,
  attempt = 0,
  createdAt = 1,
): RuntimeSandbox {
  return { id, state, createdAt, attempt, ip: '', additionalIps: [], hasStatus: true };
}

function ctr(
  id: string,
  name: string,
  o: Partial<RuntimeContainer> & { hash?: string; restartCount?: number; type?: 'init' | 'container' } = {},
): RuntimeContainer {
  return {
    id,
    sandboxId: o.sandboxId ?? 's1',
    name,
    state: o.state ?? ContainerState.CONTAINER_RUNNING,
    createdAt: o.createdAt ?? 10,
    startedAt: o.startedAt ?? 0,
    finishedAt: o.finishedAt ?? 0,
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
      hash: o.hash ?? `h-${name}`,
      restartCount: o.restartCount ?? 0,
      type: o.type,
    },
  };
}

function pod(sandboxes: RuntimeSandbox[], containers: RuntimeContainer[]): RuntimePod {
  return { uid: UID, name: 'p', namespace: 'default', sandboxes, containers };
}

const c = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'img', ...extra });

function input(over: Partial<ComputeInput>): ComputeInput {
  const containers = over.containers ?? [c('a')];
  const initContainers = over.initContainers ?? [];
  const backoff = new CrashLoopBackOff();
  return {
    uid: UID,
    restartPolicy: 'Always',
    initContainers,
    containers,
    specMatches: (inst) => inst.meta.hash === `h-${inst.name}`,
    runtime: undefined,
    nowMs: NOW_MS,
    admitRestart: (key, startedAt, finishedAt) => backoff.admit(key, startedAt, finishedAt, NOW_MS, KUBELET_BACKOFF),
    ...over,
  };
}

/** The plan's actions of one kind, without their kind. */
function of<K extends PodActionKind>(p: PodActions, kind: K): Omit<PodActionOf<K>, 'kind'>[] {
  return actionsOf(p, kind).map(({ kind: _, ...rest }) => rest);
}

/** The plan, and its actions grouped by kind: the tests below read them so. */
function computePodActions(i: ComputeInput) {
  const p = plan(i);
  return {
    ...p,
    createSandbox: of(p, 'createSandbox')[0],
    stopSandboxes: of(p, 'stopSandbox').map((a) => a.id),
    kill: of(p, 'killContainer'),
    startCreated: of(p, 'startCreatedContainer'),
    start: of(p, 'startContainer'),
    removeContainers: of(p, 'removeContainer').map((a) => a.id),
    removeSandboxes: of(p, 'removeSandbox').map((a) => a.id),
  };
}

describe('computePodActions', () => {
  it('creates a sandbox and starts every container for a new pod', () => {
    const a = computePodActions(input({ containers: [c('a'), c('b')] }));
    expect(a.createSandbox).toEqual({ attempt: 0, why: 'no sandbox' });
    expect(a.start.map((s) => [s.container.name, s.restartCount])).toEqual([
      ['a', undefined],
      ['b', undefined],
    ]);
  });

  it('does nothing for a pod that runs as specified (adoption after an agent restart)', () => {
    const a = computePodActions(input({ runtime: pod([sandbox('s1')], [ctr('c1', 'a')]) }));
    expect(isEmpty(a)).toBe(true);
  });

  it('starts a container found CREATED with the right hash instead of making a duplicate', () => {
    const a = computePodActions(
      input({ runtime: pod([sandbox('s1')], [ctr('c1', 'a', { state: ContainerState.CONTAINER_CREATED })]) }),
    );
    expect(a.startCreated).toEqual([{ id: 'c1', name: 'a' }]);
    expect(a.start).toEqual([]);
  });

  it('recreates a dead sandbox with the next attempt and restarts its containers', () => {
    const a = computePodActions(
      input({
        runtime: pod([sandbox('s1', PodSandboxState.SANDBOX_NOTREADY, 2)], [ctr('c1', 'a', { restartCount: 4 })]),
      }),
    );
    expect(a.createSandbox?.attempt).toBe(3);
    expect(a.kill.map((k) => k.id)).toEqual(['c1']);
    expect(a.start.map((s) => s.restartCount)).toEqual([5]);
  });

  it('leaves a Never pod whose sandbox died after its containers ran', () => {
    const a = computePodActions(
      input({
        restartPolicy: 'Never',
        runtime: pod(
          [sandbox('s1', PodSandboxState.SANDBOX_NOTREADY)],
          [ctr('c1', 'a', { state: ContainerState.CONTAINER_EXITED })],
        ),
      }),
    );
    expect(a.createSandbox).toBeUndefined();
    expect(a.start).toEqual([]);
  });

  it('restarts a container whose spec hash changed', () => {
    const a = computePodActions(
      input({ runtime: pod([sandbox('s1')], [ctr('c1', 'a', { hash: 'old', restartCount: 1 })]) }),
    );
    expect(a.kill).toEqual([{ id: 'c1', name: 'a', why: 'container spec changed' }]);
    expect(a.start.map((s) => [s.container.name, s.restartCount])).toEqual([['a', 2]]);
  });

  it.each([
    ['Always', 0, true],
    ['Always', 1, true],
    ['OnFailure', 0, false],
    ['OnFailure', 2, true],
    ['Never', 0, false],
    ['Never', 2, false],
  ])('restartPolicy %s, exit code %d: restart=%s', (policy, exitCode, restart) => {
    const dead = ctr('c1', 'a', {
      state: ContainerState.CONTAINER_EXITED,
      exitCode,
      startedAt: 1 * S,
      finishedAt: 2 * S,
    });
    const a = computePodActions(input({ restartPolicy: policy, runtime: pod([sandbox('s1')], [dead]) }));
    expect(a.start.length).toBe(restart ? 1 : 0);
  });

  it('holds a crash-looping container back and says so, then lets it go when the back-off expires', () => {
    const backoff = new CrashLoopBackOff();
    const dead = (finishedMs: number) =>
      ctr(`c${finishedMs}`, 'a', {
        state: ContainerState.CONTAINER_EXITED,
        exitCode: 1,
        startedAt: (finishedMs - 100) * 1e6,
        finishedAt: finishedMs * 1e6,
      });
    const at = (nowMs: number, d: RuntimeContainer) =>
      computePodActions(
        input({
          nowMs,
          runtime: pod([sandbox('s1')], [d]),
          admitRestart: (k, s, f) => backoff.admit(k, s, f, nowMs, KUBELET_BACKOFF),
        }),
      );
    expect(at(NOW_MS, dead(NOW_MS)).start).toHaveLength(1); // first crash: at once
    const held = at(NOW_MS + 1000, dead(NOW_MS + 1000));
    expect(held.start).toEqual([]);
    expect(held.waiting.get('a')).toEqual({
      reason: 'CrashLoopBackOff',
      message: 'back-off 10s restarting failed container=a pod=u1',
    });
    expect(held.wakeAtMs).toBe(NOW_MS + 11_000);
    expect(at(NOW_MS + 11_000, dead(NOW_MS + 1000)).start).toHaveLength(1);
  });

  it('runs init containers one at a time, in order, before the app containers', () => {
    const inits = [c('i1'), c('i2')];
    const base = { initContainers: inits, containers: [c('a')] };
    const fresh = computePodActions(input(base));
    expect(fresh.start.map((s) => s.container.name)).toEqual(['i1']);
    const i1Running = computePodActions(
      input({ ...base, runtime: pod([sandbox('s1')], [ctr('x1', 'i1', { type: 'init' })]) }),
    );
    expect(isEmpty(i1Running)).toBe(true);
    const i1Done = computePodActions(
      input({
        ...base,
        runtime: pod([sandbox('s1')], [ctr('x1', 'i1', { type: 'init', state: ContainerState.CONTAINER_EXITED })]),
      }),
    );
    expect(i1Done.start.map((s) => s.container.name)).toEqual(['i2']);
    const bothDone = computePodActions(
      input({
        ...base,
        runtime: pod(
          [sandbox('s1')],
          [
            ctr('x1', 'i1', { type: 'init', state: ContainerState.CONTAINER_EXITED }),
            ctr('x2', 'i2', { type: 'init', state: ContainerState.CONTAINER_EXITED }),
          ],
        ),
      }),
    );
    expect(bothDone.start.map((s) => s.container.name)).toEqual(['a']);
  });

  it('fails a Never pod whose init container failed, and retries it under Always', () => {
    const failed = ctr('x1', 'i1', {
      type: 'init',
      state: ContainerState.CONTAINER_EXITED,
      exitCode: 7,
      startedAt: S,
      finishedAt: 2 * S,
    });
    const never = computePodActions(
      input({ restartPolicy: 'Never', initContainers: [c('i1')], runtime: pod([sandbox('s1')], [failed]) }),
    );
    expect(never.podFailed).toBe('init container i1 failed with exit code 7');
    expect(never.start).toEqual([]);
    const always = computePodActions(input({ initContainers: [c('i1')], runtime: pod([sandbox('s1')], [failed]) }));
    expect(always.start.map((s) => [s.container.name, s.restartCount])).toEqual([['i1', 1]]);
  });

  it('starts sidecars in order and does not wait for them to complete', () => {
    const sidecar = c('side', { restartPolicy: 'Always' });
    const base = { initContainers: [sidecar], containers: [c('a')] };
    const running = computePodActions(
      input({ ...base, runtime: pod([sandbox('s1')], [ctr('x1', 'side', { type: 'init' })]) }),
    );
    expect(running.start.map((s) => s.container.name)).toEqual(['a']);
  });

  it('kills containers the spec no longer names and those left in an old sandbox', () => {
    const a = computePodActions(
      input({
        runtime: pod(
          [sandbox('s2', PodSandboxState.SANDBOX_READY, 1, 2), sandbox('s1')],
          [
            ctr('c2', 'a', { sandboxId: 's2' }),
            ctr('c1', 'a', { createdAt: 5 }),
            ctr('c3', 'gone', { sandboxId: 's2' }),
          ],
        ),
      }),
    );
    expect(a.stopSandboxes).toEqual(['s1']);
    expect(a.kill.map((k) => [k.id, k.why]).sort()).toEqual([
      ['c1', 'belongs to an old sandbox'],
      ['c3', 'not in the pod spec'],
    ]);
  });

  it('keeps the newest dead instance of each container for lastState and removes older ones', () => {
    const a = computePodActions(
      input({
        runtime: pod(
          [sandbox('s1')],
          [
            ctr('new', 'a', { createdAt: 30, restartCount: 2 }),
            ctr('dead2', 'a', { createdAt: 20, state: ContainerState.CONTAINER_EXITED }),
            ctr('dead1', 'a', { createdAt: 10, state: ContainerState.CONTAINER_EXITED }),
          ],
        ),
      }),
    );
    expect(a.removeContainers).toEqual(['dead1']);
  });

  it('removes dead sandboxes nothing refers to, never the current one', () => {
    const a = computePodActions(
      input({
        runtime: pod(
          [sandbox('s2', PodSandboxState.SANDBOX_READY, 1, 2), sandbox('s1', PodSandboxState.SANDBOX_NOTREADY, 0, 1)],
          [ctr('c2', 'a', { sandboxId: 's2' })],
        ),
      }),
    );
    expect(a.removeSandboxes).toEqual(['s1']);
  });

  it("starts the whole pod over when a finished init container's spec changed", () => {
    const a = computePodActions(
      input({
        initContainers: [c('i1')],
        runtime: pod(
          [sandbox('s1', PodSandboxState.SANDBOX_READY, 0)],
          [
            ctr('x1', 'i1', { type: 'init', hash: 'old', state: ContainerState.CONTAINER_EXITED }),
            ctr('c1', 'a', { createdAt: 20 }),
          ],
        ),
      }),
    );
    expect(a.createSandbox).toEqual({ attempt: 1, why: 'init container i1 spec changed' });
    expect(a.kill.map((k) => k.id)).toEqual(['c1']);
    expect(a.stopSandboxes).toEqual(['s1']);
    expect(a.start.map((s) => s.container.name)).toEqual(['i1']);
  });

  it("lists the plan in the kubelet's order: kills, sandbox stops, the new sandbox, then starts", () => {
    const p = plan(
      input({
        initContainers: [c('i1')],
        runtime: pod(
          [sandbox('s1', PodSandboxState.SANDBOX_READY, 0)],
          [
            ctr('x1', 'i1', { type: 'init', hash: 'old', state: ContainerState.CONTAINER_EXITED }),
            ctr('c1', 'a', { createdAt: 20 }),
          ],
        ),
      }),
    );
    expect(p.actions.map((a) => a.kind)).toEqual(['killContainer', 'stopSandbox', 'createSandbox', 'startContainer']);
  });

  it('leaves a Never pod whose sandbox died as it is: nothing started, nothing collected', () => {
    const exited = { state: ContainerState.CONTAINER_EXITED, exitCode: 1, sandboxId: 's1' };
    const p = plan(
      input({
        restartPolicy: 'Never',
        runtime: pod(
          [
            sandbox('s1', PodSandboxState.SANDBOX_NOTREADY, 1, 2),
            sandbox('s0', PodSandboxState.SANDBOX_NOTREADY, 0, 1),
          ],
          [
            ctr('c3', 'a', { ...exited, createdAt: 30 }),
            ctr('c2', 'a', { ...exited, createdAt: 20 }),
            ctr('c1', 'a', { ...exited, createdAt: 10 }),
          ],
        ),
      }),
    );
    expect(p.actions).toEqual([]);
  });

  describe('probe results and image pulls are inputs', () => {
    const running = pod([sandbox('s1')], [ctr('c1', 'a', { startedAt: (NOW_MS - 60_000) * 1e6 })]);

    it("plans a kill with reason LivenessProbe and a restart, with the probe's grace", () => {
      const spec = c('a', { livenessProbe: { exec: { command: ['x'] }, terminationGracePeriodSeconds: 7 } });
      const a = computePodActions(
        input({ containers: [spec], runtime: running, failedProbe: (i) => (i.id === 'c1' ? 'liveness' : undefined) }),
      );
      expect(a.kill).toEqual([
        {
          id: 'c1',
          name: 'a',
          why: 'Container a failed liveness probe, will be restarted',
          reason: 'LivenessProbe',
          graceSeconds: 7,
        },
      ]);
      expect(a.start.map((s) => [s.container.name, s.restartCount])).toEqual([['a', 1]]);
    });

    it('under restartPolicy Never, kills without a restart', () => {
      const a = computePodActions(input({ restartPolicy: 'Never', runtime: running, failedProbe: () => 'startup' }));
      expect(a.kill.map((k) => [k.id, k.reason, k.why])).toEqual([
        ['c1', 'StartupProbe', 'Container a failed startup probe'],
      ]);
      expect(a.start).toEqual([]);
    });

    it('a container with no failed probe is left alone', () => {
      expect(isEmpty(computePodActions(input({ runtime: running, failedProbe: () => undefined })))).toBe(true);
    });

    it('holds a start while the image is in its pull back-off, waking when it ends', () => {
      const a = computePodActions(
        input({
          runtime: undefined,
          pullHold: (ct) =>
            ct.name === 'a'
              ? {
                  notBefore: NOW_MS + 20_000,
                  reason: 'ImagePullBackOff',
                  message: 'Back-off pulling image "img": ErrImagePull: no',
                }
              : undefined,
        }),
      );
      expect(a.createSandbox).toBeDefined();
      expect(a.start).toEqual([]);
      expect(a.waiting.get('a')).toEqual({
        reason: 'ImagePullBackOff',
        message: 'Back-off pulling image "img": ErrImagePull: no',
      });
      expect(a.wakeAtMs).toBe(NOW_MS + 20_000);
    });
  });

  // computePodActions with ContainerRestartRules on: an exited container runs again by ContainerShouldRestart
  // (its rules, its own restartPolicy, the pod's), a failed probe restarts it by its own policy, else the pod's.
  describe('container restart policies and rules (ContainerRestartRules)', () => {
    const on42: Container['restartPolicyRules'] = [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }];
    const exitedWith = (exitCode: number, name = 'a', type?: 'init') =>
      ctr(`x${exitCode}`, name, {
        state: ContainerState.CONTAINER_EXITED,
        exitCode,
        startedAt: S,
        finishedAt: 2 * S,
        restartCount: 2,
        ...(type ? { type } : {}),
      });
    const started = (a: ReturnType<typeof computePodActions>) => a.start.map((s) => [s.container.name, s.restartCount]);
    const run = (restartPolicy: string, spec: Container, dead: RuntimeContainer) =>
      computePodActions(input({ restartPolicy, containers: [spec], runtime: pod([sandbox('s1')], [dead]) }));

    it('restarts on an exit code a Restart rule lists, in a Never pod, counting the restart', () => {
      expect(
        started(run('Never', c('a', { restartPolicy: 'Never', restartPolicyRules: on42 }), exitedWith(42))),
      ).toEqual([['a', 3]]);
    });

    it('does not restart on an exit code no rule matches: the container policy decides', () => {
      expect(
        started(run('Never', c('a', { restartPolicy: 'Never', restartPolicyRules: on42 }), exitedWith(1))),
      ).toEqual([]);
      expect(
        started(run('Always', c('a', { restartPolicy: 'Never', restartPolicyRules: on42 }), exitedWith(1))),
      ).toEqual([]);
      const notIn: Container['restartPolicyRules'] = [
        { action: 'Restart', exitCodes: { operator: 'NotIn', values: [0] } },
      ];
      expect(
        started(run('Never', c('a', { restartPolicy: 'Never', restartPolicyRules: notIn }), exitedWith(3))),
      ).toEqual([['a', 3]]);
      expect(
        started(run('Never', c('a', { restartPolicy: 'Never', restartPolicyRules: notIn }), exitedWith(0))),
      ).toEqual([]);
    });

    it("a container's own policy overrides the pod's", () => {
      expect(started(run('Always', c('a', { restartPolicy: 'Never' }), exitedWith(0)))).toEqual([]);
      expect(started(run('Always', c('a', { restartPolicy: 'Never' }), exitedWith(1)))).toEqual([]);
      expect(started(run('Never', c('a', { restartPolicy: 'Always' }), exitedWith(0)))).toEqual([['a', 3]]);
      expect(started(run('Never', c('a', { restartPolicy: 'OnFailure' }), exitedWith(1)))).toEqual([['a', 3]]);
      expect(started(run('Never', c('a', { restartPolicy: 'OnFailure' }), exitedWith(0)))).toEqual([]);
      expect(started(run('Always', c('a', { restartPolicy: 'OnFailure' }), exitedWith(0)))).toEqual([]);
    });

    it('a restart a rule asks for goes through the crash-loop back-off', () => {
      const backoff = new CrashLoopBackOff();
      const spec = c('a', { restartPolicy: 'Never', restartPolicyRules: on42 });
      const at = (nowMs: number) =>
        computePodActions(
          input({
            restartPolicy: 'Never',
            containers: [spec],
            nowMs,
            runtime: pod(
              [sandbox('s1')],
              [
                ctr('d', 'a', {
                  state: ContainerState.CONTAINER_EXITED,
                  exitCode: 42,
                  startedAt: (nowMs - 100) * 1e6,
                  finishedAt: nowMs * 1e6,
                }),
              ],
            ),
            admitRestart: (k, s, f) => backoff.admit(k, s, f, nowMs, KUBELET_BACKOFF),
          }),
        );
      expect(at(NOW_MS).start).toHaveLength(1);
      const held = at(NOW_MS + 1000);
      expect(held.start).toEqual([]);
      expect(held.waiting.get('a')?.reason).toBe('CrashLoopBackOff');
    });

    it('after a failed probe: the container policy, else the pod one, decides; rules are not read', () => {
      const running = pod([sandbox('s1')], [ctr('c1', 'a')]);
      const probe = (restartPolicy: string, spec: Container) =>
        computePodActions(
          input({ restartPolicy, containers: [spec], runtime: running, failedProbe: () => 'liveness' }),
        );
      const neverInAlways = probe('Always', c('a', { restartPolicy: 'Never' }));
      expect(neverInAlways.kill.map((k) => k.why)).toEqual(['Container a failed liveness probe']);
      expect(neverInAlways.start).toEqual([]);
      const alwaysInNever = probe('Never', c('a', { restartPolicy: 'Always' }));
      expect(alwaysInNever.kill.map((k) => k.why)).toEqual(['Container a failed liveness probe, will be restarted']);
      expect(started(alwaysInNever)).toEqual([['a', 1]]);
      const anyCode: Container['restartPolicyRules'] = [
        { action: 'Restart', exitCodes: { operator: 'NotIn', values: [] } },
      ];
      expect(probe('Always', c('a', { restartPolicy: 'Never', restartPolicyRules: anyCode })).start).toEqual([]);
    });

    it('a sidecar whose liveness probe failed is restarted in a Never pod too: its own policy is Always', () => {
      const a = computePodActions(
        input({
          restartPolicy: 'Never',
          initContainers: [c('side', { restartPolicy: 'Always' })],
          containers: [c('a')],
          runtime: pod([sandbox('s1')], [ctr('x1', 'side', { type: 'init' }), ctr('c1', 'a')]),
          failedProbe: (i) => (i.id === 'x1' ? 'liveness' : undefined),
        }),
      );
      expect(a.kill.map((k) => k.why)).toEqual(['Container side failed liveness probe, will be restarted']);
      expect(started(a)).toEqual([['side', 1]]);
    });

    it("an init container's own policy and rules decide whether its failure fails the pod", () => {
      const runInit = (restartPolicy: string, spec: Container, exitCode: number) =>
        computePodActions(
          input({
            restartPolicy,
            initContainers: [spec],
            runtime: pod([sandbox('s1')], [exitedWith(exitCode, spec.name, 'init')]),
          }),
        );
      const retried = runInit('Never', c('i1', { restartPolicy: 'OnFailure' }), 7);
      expect(retried.podFailed).toBeUndefined();
      expect(started(retried)).toEqual([['i1', 3]]);
      const ruled = runInit('Never', c('i1', { restartPolicy: 'Never', restartPolicyRules: on42 }), 42);
      expect(ruled.podFailed).toBeUndefined();
      expect(started(ruled)).toEqual([['i1', 3]]);
      expect(runInit('Never', c('i1', { restartPolicy: 'Never', restartPolicyRules: on42 }), 1).podFailed).toBe(
        'init container i1 failed with exit code 1',
      );
      expect(runInit('Always', c('i1', { restartPolicy: 'Never' }), 7).podFailed).toBe(
        'init container i1 failed with exit code 7',
      );
    });

    it("a new sandbox starts every app container but an OnFailure pod's succeeded ones: the pod's policy alone, as the kubelet of 1.36", () => {
      const a = computePodActions(
        input({
          containers: [c('done', { restartPolicy: 'Never' }), c('app')],
          runtime: pod(
            [sandbox('s1', PodSandboxState.SANDBOX_NOTREADY)],
            [exitedWith(0, 'done'), exitedWith(1, 'app')],
          ),
        }),
      );
      expect(a.createSandbox).toMatchObject({ attempt: 1 });
      expect(started(a)).toEqual([
        ['done', 3],
        ['app', 3],
      ]);
    });
  });
});

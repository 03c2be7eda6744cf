import type { ContainerStatus, PodCondition, PodStatus } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { ContainerState, PodSandboxState } from '../../../src/cri/cri-types.js';
import { generatePodStatus } from '../../../src/status/generate-pod-status.js';
import type { GenerateInput } from '../../../src/status/types.js';
import { ctr, exited, input, iso, ns, probes, runtimePod, sandbox, staticPod, T0 } from './fixtures.js';

function cs(s: PodStatus, name: string): ContainerStatus {
  const found = [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? [])].find((c) => c.name === name);
  if (!found) throw new Error(`no status for ${name}`);
  return found;
}

function condition(s: PodStatus, type: string): PodCondition {
  const c = s.conditions?.find((x) => x.type === type);
  if (!c) throw new Error(`no condition ${type}`);
  return c;
}

const conditionStatuses = (s: PodStatus): Record<string, string> =>
  Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c.status]));

const withSidecar = staticPod({
  initContainers: [{ name: 'proxy', image: 'proxy:1', restartPolicy: 'Always' }],
  containers: [{ name: 'app', image: 'busybox:1.36' }],
});
const twoInits = staticPod({
  initContainers: [
    { name: 'init-a', image: 'busybox:1.36' },
    { name: 'init-b', image: 'busybox:1.36' },
  ],
});

interface Case {
  name: string;
  in: Partial<GenerateInput>;
  phase: string;
  container: string;
  state: ContainerStatus['state'];
  extra?: (s: PodStatus) => void;
}

/** What exited('c1', 'app', 0) reports: terminated, Completed. */
const COMPLETED_C1 = {
  terminated: {
    exitCode: 0,
    reason: 'Completed',
    startedAt: iso(T0 + 3000),
    finishedAt: iso(T0 + 9000),
    containerID: 'containerd://c1',
  },
};

const cases: Case[] = [
  {
    name: 'new pod, nothing in the runtime yet: Pending, ContainerCreating',
    in: {},
    phase: 'Pending',
    container: 'app',
    state: { waiting: { reason: 'ContainerCreating' } },
    extra: (s) => {
      expect(conditionStatuses(s)).toEqual({
        PodReadyToStartContainers: 'False',
        Initialized: 'True',
        Ready: 'False',
        ContainersReady: 'False',
        PodScheduled: 'True',
      });
      expect(condition(s, 'ContainersReady')).toMatchObject({
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [app]',
      });
      expect(cs(s, 'app')).toMatchObject({
        ready: false,
        started: false,
        restartCount: 0,
        image: 'busybox:1.36',
        imageID: '',
      });
    },
  },
  {
    name: 'running without readiness probe: Running and Ready',
    in: { runtime: runtimePod([sandbox()], [ctr('c1', 'app')]) },
    phase: 'Running',
    container: 'app',
    state: { running: { startedAt: iso(T0 + 3000) } },
    extra: (s) => {
      expect(conditionStatuses(s)).toEqual({
        PodReadyToStartContainers: 'True',
        Initialized: 'True',
        Ready: 'True',
        ContainersReady: 'True',
        PodScheduled: 'True',
      });
      expect(cs(s, 'app')).toMatchObject({
        ready: true,
        started: true,
        containerID: 'containerd://c1',
        image: 'busybox:1.36',
        imageID: 'docker.io/library/busybox@sha256:abc',
        lastState: {},
      });
      expect(s).toMatchObject({
        hostIP: '10.0.0.11',
        hostIPs: [{ ip: '10.0.0.11' }],
        podIP: '10.0.0.11',
        podIPs: [{ ip: '10.0.0.11' }],
        qosClass: 'BestEffort',
      });
      expect(s.startTime).toBe(iso(T0));
    },
  },
  {
    name: 'running, readiness probe false: Running, not Ready',
    in: {
      pod: staticPod({
        containers: [{ name: 'app', image: 'busybox:1.36', readinessProbe: { exec: { command: ['true'] } } }],
      }),
      runtime: runtimePod([sandbox()], [ctr('c1', 'app')]),
      probes: probes({ app: false }),
    },
    phase: 'Running',
    container: 'app',
    state: { running: { startedAt: iso(T0 + 3000) } },
    extra: (s) => {
      expect(cs(s, 'app')).toMatchObject({ ready: false, started: true });
      expect(condition(s, 'Ready')).toMatchObject({
        status: 'False',
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [app]',
      });
    },
  },
  {
    name: 'readiness probe without a result yet: not ready',
    in: {
      pod: staticPod({
        containers: [{ name: 'app', image: 'busybox:1.36', readinessProbe: { exec: { command: ['true'] } } }],
      }),
      runtime: runtimePod([sandbox()], [ctr('c1', 'app')]),
    },
    phase: 'Running',
    container: 'app',
    state: { running: { startedAt: iso(T0 + 3000) } },
    extra: (s) => expect(cs(s, 'app').ready).toBe(false),
  },
  {
    name: 'startup probe not yet successful: not started, not ready',
    in: {
      pod: staticPod({
        containers: [{ name: 'app', image: 'busybox:1.36', startupProbe: { exec: { command: ['true'] } } }],
      }),
      runtime: runtimePod([sandbox()], [ctr('c1', 'app')]),
      probes: probes({}, { app: false }),
    },
    phase: 'Running',
    container: 'app',
    state: { running: { startedAt: iso(T0 + 3000) } },
    extra: (s) => expect(cs(s, 'app')).toMatchObject({ started: false, ready: false }),
  },
  {
    name: 'crash loop: waiting CrashLoopBackOff, lastState terminated Error, restartCount',
    in: {
      runtime: runtimePod(
        [sandbox()],
        [
          exited('c2', 'app', 1, { restartCount: 2, createdAt: ns(T0 + 20_000) }),
          exited('c1', 'app', 1, { restartCount: 1 }),
        ],
      ),
      waiting: new Map([
        [
          'app',
          {
            reason: 'CrashLoopBackOff',
            message: 'back-off 20s restarting failed container=app pod=web-node1_default(x)',
          },
        ],
      ]),
    },
    phase: 'Running',
    container: 'app',
    state: {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: 'back-off 20s restarting failed container=app pod=web-node1_default(x)',
      },
    },
    extra: (s) => {
      expect(cs(s, 'app').restartCount).toBe(2);
      expect(cs(s, 'app').lastState).toEqual({
        terminated: {
          exitCode: 1,
          reason: 'Error',
          startedAt: iso(T0 + 3000),
          finishedAt: iso(T0 + 9000),
          containerID: 'containerd://c2',
        },
      });
      expect(cs(s, 'app').containerID).toBe('containerd://c2');
    },
  },
  {
    name: 'first image pull failure: ErrImagePull',
    in: {
      waiting: new Map([
        ['app', { reason: 'ErrImagePull', message: 'failed to pull and unpack image "busybox:1.36": not found' }],
      ]),
    },
    phase: 'Pending',
    container: 'app',
    state: {
      waiting: { reason: 'ErrImagePull', message: 'failed to pull and unpack image "busybox:1.36": not found' },
    },
  },
  {
    name: 'image in its pull back-off: ImagePullBackOff, as the pod worker planned it',
    in: {
      waiting: new Map([
        [
          'app',
          { reason: 'ImagePullBackOff', message: 'Back-off pulling image "busybox:1.36": ErrImagePull: not found' },
        ],
      ]),
    },
    phase: 'Pending',
    container: 'app',
    state: {
      waiting: {
        reason: 'ImagePullBackOff',
        message: 'Back-off pulling image "busybox:1.36": ErrImagePull: not found',
      },
    },
  },
  {
    name: 'configuration error: CreateContainerConfigError',
    in: { waiting: new Map([['app', { reason: 'CreateContainerConfigError', message: 'bad env' }]]) },
    phase: 'Pending',
    container: 'app',
    state: { waiting: { reason: 'CreateContainerConfigError', message: 'bad env' } },
  },
  {
    name: 'completed under Never: Succeeded, terminated Completed',
    in: { pod: staticPod({ restartPolicy: 'Never' }), runtime: runtimePod([sandbox()], [exited('c1', 'app', 0)]) },
    phase: 'Succeeded',
    container: 'app',
    state: COMPLETED_C1,
    extra: (s) => {
      expect(condition(s, 'ContainersReady')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
      expect(condition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'PodCompleted' });
    },
  },
  {
    name: 'completed under OnFailure: Succeeded',
    in: {
      pod: staticPod({ restartPolicy: 'OnFailure' }),
      runtime: runtimePod([sandbox()], [exited('c1', 'app', 0)]),
      waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'stale' }]]),
    },
    phase: 'Succeeded',
    container: 'app',
    state: COMPLETED_C1,
  },
  {
    name: 'failed under OnFailure and restarting: Running',
    in: {
      pod: staticPod({ restartPolicy: 'OnFailure' }),
      runtime: runtimePod([sandbox()], [exited('c1', 'app', 3)]),
      waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off' }]]),
    },
    phase: 'Running',
    container: 'app',
    state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } },
  },
  {
    name: 'a rule Restart on 42 in a Never pod, ended 42 and backing off: Running, CrashLoopBackOff shown',
    in: {
      pod: staticPod({
        restartPolicy: 'Never',
        containers: [
          {
            name: 'app',
            image: 'busybox:1.36',
            restartPolicy: 'Never',
            restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
          },
        ],
      }),
      runtime: runtimePod([sandbox()], [exited('c1', 'app', 42)]),
      waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off' }]]),
    },
    phase: 'Running',
    container: 'app',
    state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } },
  },
  {
    name: 'its own restartPolicy Never in an Always pod, ended: Failed, terminated, no waiting reason',
    in: {
      pod: staticPod({ containers: [{ name: 'app', image: 'busybox:1.36', restartPolicy: 'Never' }] }),
      runtime: runtimePod([sandbox()], [exited('c1', 'app', 2)]),
      waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'stale' }]]),
    },
    phase: 'Failed',
    container: 'app',
    state: { terminated: { exitCode: 2, reason: 'Error' } },
  },
  {
    name: 'failed under Never: Failed',
    in: {
      pod: staticPod({ restartPolicy: 'Never' }),
      runtime: runtimePod([sandbox()], [exited('c1', 'app', 2, { message: 'boom' })]),
    },
    phase: 'Failed',
    container: 'app',
    state: {
      terminated: {
        exitCode: 2,
        reason: 'Error',
        message: 'boom',
        startedAt: iso(T0 + 3000),
        finishedAt: iso(T0 + 9000),
        containerID: 'containerd://c1',
      },
    },
    extra: (s) => expect(condition(s, 'ContainersReady')).toMatchObject({ status: 'False', reason: 'PodFailed' }),
  },
  {
    name: 'OOMKilled, with the termination message joined to the runtime message',
    in: {
      pod: staticPod({ restartPolicy: 'Never' }),
      runtime: runtimePod([sandbox()], [exited('c1', 'app', 137, { reason: 'OOMKilled', message: 'memory' })]),
      terminationMessages: new Map([['c1', 'out of memory']]),
    },
    phase: 'Failed',
    container: 'app',
    state: {
      terminated: {
        exitCode: 137,
        reason: 'OOMKilled',
        message: 'memory: out of memory',
        startedAt: iso(T0 + 3000),
        finishedAt: iso(T0 + 9000),
        containerID: 'containerd://c1',
      },
    },
  },
  {
    name: 'init containers pending: app PodInitializing, init-a running',
    in: { pod: twoInits, runtime: runtimePod([sandbox()], [ctr('i1', 'init-a', { type: 'init' })]) },
    phase: 'Pending',
    container: 'app',
    state: { waiting: { reason: 'PodInitializing' } },
    extra: (s) => {
      expect(s.initContainerStatuses?.map((c) => c.name)).toEqual(['init-a', 'init-b']);
      expect(cs(s, 'init-a')).toMatchObject({ state: { running: {} }, ready: false, started: true });
      expect(cs(s, 'init-b').state).toEqual({ waiting: { reason: 'PodInitializing' } });
      expect(condition(s, 'Initialized')).toMatchObject({
        status: 'False',
        reason: 'ContainersNotInitialized',
        message: 'containers with incomplete status: [init-a init-b]',
      });
    },
  },
  {
    name: 'init containers done, app running',
    in: {
      pod: twoInits,
      runtime: runtimePod(
        [sandbox()],
        [
          exited('i1', 'init-a', 0, { type: 'init', createdAt: ns(T0 + 1) }),
          exited('i2', 'init-b', 0, { type: 'init', createdAt: ns(T0 + 2) }),
          ctr('c1', 'app', { createdAt: ns(T0 + 3) }),
        ],
      ),
    },
    phase: 'Running',
    container: 'app',
    state: { running: { startedAt: iso(T0 + 3000) } },
    extra: (s) => {
      expect(cs(s, 'init-a')).toMatchObject({ ready: true, started: false });
      expect(condition(s, 'Initialized').status).toBe('True');
    },
  },
  {
    name: 'init container failed under Never: Failed',
    in: {
      pod: { ...twoInits, spec: { ...twoInits.spec!, restartPolicy: 'Never' } },
      runtime: runtimePod([sandbox()], [exited('i1', 'init-a', 1, { type: 'init' })]),
      podFailed: 'init-a failed',
    },
    phase: 'Failed',
    container: 'app',
    state: { waiting: { reason: 'PodInitializing' } },
  },
  {
    name: 'sidecar started and ready counts; the pod is Running',
    in: {
      pod: withSidecar,
      runtime: runtimePod(
        [sandbox()],
        [ctr('p1', 'proxy', { type: 'init', createdAt: ns(T0 + 1) }), ctr('c1', 'app', { createdAt: ns(T0 + 2) })],
      ),
    },
    phase: 'Running',
    container: 'proxy',
    state: { running: { startedAt: iso(T0 + 3000) } },
    extra: (s) => {
      expect(cs(s, 'proxy')).toMatchObject({ started: true, ready: true });
      expect(conditionStatuses(s)).toMatchObject({ Initialized: 'True', ContainersReady: 'True', Ready: 'True' });
    },
  },
  {
    name: 'sidecar not ready holds ContainersReady',
    in: {
      pod: staticPod({
        initContainers: [
          { name: 'proxy', image: 'proxy:1', restartPolicy: 'Always', readinessProbe: { exec: { command: ['x'] } } },
        ],
      }),
      runtime: runtimePod(
        [sandbox()],
        [ctr('p1', 'proxy', { type: 'init', createdAt: ns(T0 + 1) }), ctr('c1', 'app', { createdAt: ns(T0 + 2) })],
      ),
      probes: probes({ proxy: false }),
    },
    phase: 'Running',
    container: 'proxy',
    state: { running: { startedAt: iso(T0 + 3000) } },
    extra: (s) =>
      expect(condition(s, 'ContainersReady')).toMatchObject({
        status: 'False',
        message: 'containers with unready status: [proxy]',
      }),
  },
  {
    name: 'created, not started: waiting without reason',
    in: {
      runtime: runtimePod([sandbox()], [ctr('c1', 'app', { state: ContainerState.CONTAINER_CREATED, startedAt: 0 })]),
    },
    phase: 'Pending',
    container: 'app',
    state: { waiting: {} },
  },
];

describe('generatePodStatus', () => {
  it.each(cases)('$name', (c) => {
    const s = generatePodStatus(input(c.in));
    expect(s.phase).toBe(c.phase);
    expect(cs(s, c.container).state).toMatchObject(c.state ?? {});
    if (c.state?.waiting) expect(cs(s, c.container).state?.waiting).toEqual(c.state.waiting);
    c.extra?.(s);
  });

  it('puts conditions in the kubelet order', () => {
    const s = generatePodStatus(input());
    expect(s.conditions?.map((c) => c.type)).toEqual([
      'PodReadyToStartContainers',
      'Initialized',
      'Ready',
      'ContainersReady',
      'PodScheduled',
    ]);
  });

  it('keeps lastTransitionTime while a condition does not change, and moves it when it does', () => {
    const first = generatePodStatus(input({ now: new Date(T0 + 10_000) }));
    const running = runtimePod([sandbox()], [ctr('c1', 'app')]);
    const second = generatePodStatus(input({ runtime: running, previous: first, now: new Date(T0 + 20_000) }));
    expect(condition(second, 'PodScheduled').lastTransitionTime).toBe(iso(T0 + 10_000));
    expect(condition(second, 'Ready').lastTransitionTime).toBe(iso(T0 + 20_000));
    const third = generatePodStatus(input({ runtime: running, previous: second, now: new Date(T0 + 30_000) }));
    expect(condition(third, 'Ready').lastTransitionTime).toBe(iso(T0 + 20_000));
    expect(third.startTime).toBe(first.startTime);
  });

  it('never leaves a terminal phase', () => {
    const pod = staticPod({ restartPolicy: 'Never' });
    const done = generatePodStatus(input({ pod, runtime: runtimePod([sandbox()], [exited('c1', 'app', 0)]) }));
    expect(done.phase).toBe('Succeeded');
    const after = generatePodStatus(input({ pod, runtime: undefined, previous: done }));
    expect(after.phase).toBe('Succeeded');
    expect(cs(after, 'app').state?.terminated?.reason).toBe('Completed');
  });

  it('reports a container that vanished while running as ended unseen (ContainerStatusUnknown)', () => {
    const running = generatePodStatus(
      input({ runtime: runtimePod([sandbox()], [ctr('c1', 'app', { restartCount: 3 })]) }),
    );
    const gone = generatePodStatus(input({ runtime: runtimePod([sandbox()], []), previous: running }));
    expect(cs(gone, 'app')).toMatchObject({
      restartCount: 4,
      lastState: { terminated: { reason: 'ContainerStatusUnknown', exitCode: 137 } },
    });
    expect(gone.phase).toBe('Running');
  });

  it('shows no waiting reason while the pod is being stopped', () => {
    const s = generatePodStatus(
      input({
        runtime: runtimePod([sandbox()], [exited('c1', 'app', 1)]),
        waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'x' }]]),
        terminating: true,
      }),
    );
    expect(cs(s, 'app').state?.terminated?.exitCode).toBe(1);
  });

  it('uses the sandbox address for a pod-network pod and the sandbox time for an adopted pod', () => {
    const pod = staticPod({ hostNetwork: false });
    pod.metadata.annotations['kubernetes.io/config.seen'] = new Date(T0 + 3_600_000).toISOString();
    const s = generatePodStatus(
      input({
        pod,
        runtime: runtimePod([sandbox('s1', { ip: '10.88.0.5', additionalIps: ['fd00::5'] })], [ctr('c1', 'app')]),
      }),
    );
    expect(s.podIP).toBe('10.88.0.5');
    expect(s.podIPs).toEqual([{ ip: '10.88.0.5' }, { ip: 'fd00::5' }]);
    expect(s.startTime).toBe(iso(T0 + 1000));
  });

  it('is not ready to start containers when the sandbox is not ready', () => {
    const s = generatePodStatus(
      input({ runtime: runtimePod([sandbox('s1', { state: PodSandboxState.SANDBOX_NOTREADY })], []) }),
    );
    expect(condition(s, 'PodReadyToStartContainers').status).toBe('False');
  });

  it('reports Burstable for requests only', () => {
    const s = generatePodStatus(
      input({
        pod: staticPod({ containers: [{ name: 'app', image: 'x', resources: { requests: { cpu: '100m' } } }] }),
      }),
    );
    expect(s.qosClass).toBe('Burstable');
  });
});

// The pod worker's side of a restart asked through the API (a mirror's restartedAt): which running
// containers computePodActions kills and starts again, and what the new ones carry.
import type { Container } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { actionsOf, computePodActions, type ComputeInput } from '../../../src/podworkers/compute-actions.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { sandbox } from '../status/fixtures.js';
import type { RuntimeContainer, RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';

const UID = 'u1';

function ctr(
  id: string,
  name: string,
  o: {
    state?: ContainerState;
    restartedAt?: string;
    restartCount?: number;
    exitCode?: number;
    type?: 'init' | 'container';
  } = {},
): RuntimeContainer {
  return {
    id,
    sandboxId: 's1',
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
      restartCount: o.restartCount ?? 0,
      type: o.type,
      ...(o.restartedAt !== undefined ? { restartedAt: o.restartedAt } : {}),
    },
  };
}

function runtime(containers: RuntimeContainer[]): RuntimePod {
  return {
    uid: UID,
    name: 'p',
    namespace: 'default',
    sandboxes: [sandbox('s1', { createdAt: 1 })],
    containers,
  };
}

const c = (name: string, extra: Partial<Container> = {}): Container => ({ name, image: 'img', ...extra });

function plan(containers: RuntimeContainer[], restartRequest: string | undefined, over: Partial<ComputeInput> = {}) {
  const p = computePodActions({
    uid: UID,
    restartPolicy: 'Always',
    initContainers: [],
    containers: [c('a'), c('b')],
    specMatches: (inst) => inst.meta.hash === `h-${inst.name}`,
    runtime: runtime(containers),
    nowMs: 5_000,
    admitRestart: () => ({}),
    restartRequest,
    ...over,
  });
  return { ...p, kill: actionsOf(p, 'killContainer'), start: actionsOf(p, 'startContainer') };
}

describe('a restart requested through the API', () => {
  it('a new value: every running container is killed and started again, restartCount + 1, carrying the value', () => {
    const p = plan([ctr('a1', 'a', { restartCount: 2 }), ctr('b1', 'b')], 'v1');
    expect(p.kill.map((k) => k.id)).toEqual(['a1', 'b1']);
    expect(p.kill[0].why).toContain('kubectl.kubernetes.io/restartedAt=v1');
    expect(p.start.map((s) => [s.container.name, s.restartCount, s.restartedAt])).toEqual([
      ['a', 3, 'v1'],
      ['b', 1, 'v1'],
    ]);
    expect(p.restarting).toBe('v1');
  });

  it('the same value, already on the containers: nothing to do (also after an agent restart, read from the runtime)', () => {
    const p = plan([ctr('a1', 'a', { restartedAt: 'v1' }), ctr('b1', 'b', { restartedAt: 'v1' })], 'v1');
    expect(p.actions).toEqual([]);
    expect(p.restarting).toBeUndefined();
  });

  it('containers carrying an older value, or none (set while the agent was down): restarted once', () => {
    const p = plan([ctr('a1', 'a', { restartedAt: 'v1' }), ctr('b1', 'b')], 'v2');
    expect(p.kill.map((k) => k.id)).toEqual(['a1', 'b1']);
    expect(p.start.every((s) => s.restartedAt === 'v2')).toBe(true);
    expect(p.restarting).toBe('v2');
  });

  it('no request (none told yet, or no mirror): nothing is restarted, whatever the containers carry', () => {
    expect(plan([ctr('a1', 'a', { restartedAt: 'v1' }), ctr('b1', 'b')], undefined).actions).toEqual([]);
  });

  it('only the containers not yet restarted for the value go', () => {
    const p = plan([ctr('a1', 'a', { restartedAt: 'v1' }), ctr('b1', 'b', { restartedAt: 'v0' })], 'v1');
    expect(p.kill.map((k) => k.id)).toEqual(['b1']);
  });

  it("a crashed container restarted before any request is known keeps its predecessor's value, so it is not restarted again", () => {
    const dead = ctr('a1', 'a', { state: ContainerState.CONTAINER_EXITED, exitCode: 1, restartedAt: 'v1' });
    const p = plan([dead, ctr('b1', 'b', { restartedAt: 'v1' })], undefined);
    expect(p.start.map((s) => [s.container.name, s.restartedAt])).toEqual([['a', 'v1']]);
  });

  it('a finished init container is not run again; a running sidecar is restarted', () => {
    const init = ctr('i1', 'init', { state: ContainerState.CONTAINER_EXITED, exitCode: 0, type: 'init' });
    const side = ctr('s1c', 'side', { type: 'init' });
    const p = plan([init, side, ctr('a1', 'a')], 'v1', {
      initContainers: [c('init'), c('side', { restartPolicy: 'Always' })],
      containers: [c('a')],
    });
    expect(p.kill.map((k) => k.id)).toEqual(['s1c']);
    expect(p.start.map((s) => s.container.name)).toEqual(['side']);
  });
});

// A pod stopped for the node's shutdown reports the kubelet's terminal status once nothing of it
// runs, and leaves it behind when a cancelled shutdown starts it again.
import { PodSandboxState } from '../../../src/cri/cri-types.js';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { TerminationRequest } from '../../../src/podworkers/termination-request.js';
import { StatusManager, type PodWorkerView } from '../../../src/status/status-manager.js';
import { ctr, exited, probes, runtimePod, sandbox, staticPod, T0, UID } from './fixtures.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const STOP = { reason: 'Terminated', message: 'Pod was terminated in response to imminent node shutdown.' };
const SHUTDOWN: TerminationRequest = { reason: 'node-shutdown', graceSeconds: 7, status: STOP };

describe('status of a pod stopped for the node shutdown', () => {
  it('is Failed with reason Terminated and a DisruptionTarget condition once stopped, Running again after a cancel', async () => {
    let view: PodWorkerView = {
      uid: UID,
      key: 'default/web-node1',
      state: 'Terminating',
      pod: staticPod(),
      termination: SHUTDOWN,
    };
    let rt = runtimePod([sandbox()], [ctr('c1', 'app')]);
    const m = new StatusManager({
      runtimePod: () => rt,
      pods: () => [view],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(T0 + 60_000),
    });
    m.update(UID);
    await m.idle();
    // Still stopping: not terminal yet.
    expect(m.get(UID)?.status.phase).toBe('Running');
    expect(m.get(UID)?.status.reason).toBeUndefined();

    view = { ...view, state: 'Terminated' };
    rt = runtimePod([sandbox('s1', { state: PodSandboxState.SANDBOX_NOTREADY })], [exited('c1', 'app', 137)]);
    m.update(UID);
    await m.idle();
    const s = m.get(UID)!.status;
    expect({ phase: s.phase, reason: s.reason, message: s.message }).toEqual({ phase: 'Failed', ...STOP });
    expect(s.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'TerminationByKubelet',
      message: STOP.message,
    });
    expect(s.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(s.containerStatuses?.[0].state?.terminated?.exitCode).toBe(137);

    // Cancelled: the pod runs again under its UID; the terminal status does not stick.
    view = { uid: UID, key: 'default/web-node1', state: 'Syncing', pod: staticPod() };
    rt = runtimePod([sandbox('s2')], [ctr('c2', 'app')]);
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.status.phase).toBe('Running');
    expect(m.get(UID)?.status.reason).toBeUndefined();
    expect(m.get(UID)?.status.conditions?.some((c) => c.type === 'DisruptionTarget')).toBe(false);
  });
});

describe('status of a pod preempted for a critical pod', () => {
  const PREEMPTED = {
    reason: 'Preempting',
    message: 'Preempted in order to admit critical pod',
    conditionMessage: 'Pod was preempted by Kubelet to accommodate a critical pod.',
    alwaysFailed: true,
  };
  const PREEMPTION: TerminationRequest = { reason: 'preempted', status: PREEMPTED };

  it('is Failed with the preemption at once, then follows its containers under it, and stays after its worker is gone', async () => {
    let view: PodWorkerView | undefined = { uid: UID, key: 'default/web-node1', state: 'Syncing', pod: staticPod() };
    let rt = runtimePod([sandbox()], [ctr('c1', 'app')]);
    const m = new StatusManager({
      runtimePod: () => rt,
      pods: () => (view ? [view] : []),
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      now: () => new Date(T0 + 60_000),
    });
    m.update(UID);
    await m.idle();
    // Admission holds its status while it stays refused; its worker is asked to stop it for the preemption.
    m.hold(UID, 'admission');
    view = { ...view, termination: PREEMPTION, removing: true };
    m.update(UID);
    await m.idle();
    const first = m.get(UID)!.status;
    expect({ phase: first.phase, reason: first.reason, message: first.message }).toEqual({
      phase: 'Failed',
      reason: 'Preempting',
      message: PREEMPTED.message,
    });
    expect(first.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'TerminationByKubelet',
      message: PREEMPTED.conditionMessage,
    });
    expect(first.containerStatuses?.[0].state?.running).toBeDefined();

    // Its container exits 0 on SIGTERM: still Failed, as the kubelet's status function sets it.
    view = { ...view, state: 'Terminated' };
    rt = runtimePod([sandbox('s1', { state: PodSandboxState.SANDBOX_NOTREADY })], [exited('c1', 'app', 0)]);
    // Its worker pushes the final status before the clean-up.
    await m.recordFinal(view);
    const stopped = m.get(UID)!.status;
    expect({ phase: stopped.phase, reason: stopped.reason }).toEqual({ phase: 'Failed', reason: 'Preempting' });
    expect(stopped.containerStatuses?.[0].state?.terminated?.exitCode).toBe(0);
    expect(stopped.conditions?.find((c) => c.type === 'DisruptionTarget')?.lastTransitionTime).toBe(
      first.conditions?.find((c) => c.type === 'DisruptionTarget')?.lastTransitionTime,
    );

    rt = runtimePod([], []);
    view = undefined;
    m.update(UID);
    await m.idle();
    expect(m.get(UID)?.status).toEqual(stopped);
    m.release(UID, 'admission');
    expect(m.get(UID)).toBeUndefined();
  });
});

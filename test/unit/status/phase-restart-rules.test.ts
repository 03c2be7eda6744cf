// The pod phase with containers' own restart policies and rules (getPhase with ContainerRestartRules
// on): a stopped container counts as on its way back when its rules or policy run it again.
import type { Container, ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { podPhase } from '../../../src/status/phase.js';

const on42: Container['restartPolicyRules'] = [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }];

const pod = (restartPolicy: string, containers: Container[], initContainers: Container[] = []): Pod => ({
  metadata: { name: 'p', namespace: 'ns', uid: 'u' },
  spec: { restartPolicy, containers, initContainers },
});
const app = (extra: Partial<Container> = {}): Container => ({ name: 'app', image: 'busybox', ...extra });
const running = (name: string): ContainerStatus => ({
  name,
  image: 'busybox',
  imageID: '',
  ready: true,
  restartCount: 0,
  state: { running: {} },
});
const terminated = (name: string, exitCode: number): ContainerStatus => ({
  name,
  image: 'busybox',
  imageID: '',
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode } },
});
/** Waiting to run again (CrashLoopBackOff) after ending with `exitCode`. */
const backingOff = (name: string, exitCode: number): ContainerStatus => ({
  ...terminated(name, exitCode),
  state: { waiting: { reason: 'CrashLoopBackOff' } },
  lastState: { terminated: { exitCode } },
});

describe('podPhase with container restart policies and rules', () => {
  it.each([
    [
      'Always pod, a Never container ended beside a running one: Running',
      pod('Always', [app({ restartPolicy: 'Never' }), { name: 'web', image: 'w' }]),
      [terminated('app', 1), running('web')],
      'Running',
    ],
    [
      'Always pod, its only container Never and failed: Failed',
      pod('Always', [app({ restartPolicy: 'Never' })]),
      [terminated('app', 1)],
      'Failed',
    ],
    [
      'Always pod, its only container Never and done: Succeeded',
      pod('Always', [app({ restartPolicy: 'Never' })]),
      [terminated('app', 0)],
      'Succeeded',
    ],
    [
      'Never pod, rule In [42], ended 42: Running',
      pod('Never', [app({ restartPolicy: 'Never', restartPolicyRules: on42 })]),
      [terminated('app', 42)],
      'Running',
    ],
    [
      'Never pod, rule In [42], backing off after 42: Running',
      pod('Never', [app({ restartPolicy: 'Never', restartPolicyRules: on42 })]),
      [backingOff('app', 42)],
      'Running',
    ],
    [
      'Never pod, rule In [42], ended 1: Failed',
      pod('Never', [app({ restartPolicy: 'Never', restartPolicyRules: on42 })]),
      [terminated('app', 1)],
      'Failed',
    ],
    [
      'Never pod, an Always container ended 0: Running',
      pod('Never', [app({ restartPolicy: 'Always' })]),
      [terminated('app', 0)],
      'Running',
    ],
    [
      'OnFailure pod, a Never container failed: Failed',
      pod('OnFailure', [app({ restartPolicy: 'Never' })]),
      [terminated('app', 1)],
      'Failed',
    ],
    [
      'OnFailure pod, an OnFailure container done: Succeeded',
      pod('OnFailure', [app({ restartPolicy: 'OnFailure' })]),
      [terminated('app', 0)],
      'Succeeded',
    ],
    [
      'Never pod, rule In [42] on a rule-less policy Never container with exit 0: Succeeded',
      pod('Never', [app({ restartPolicy: 'Never', restartPolicyRules: on42 })]),
      [terminated('app', 0)],
      'Succeeded',
    ],
  ] as const)('%s', (_name, p, statuses, want) => {
    expect(podPhase(p, statuses, true)).toBe(want);
  });

  it('a failed init container its own policy restarts keeps a Never pod Pending; the pod policy alone fails it', () => {
    const init = (extra: Partial<Container>): Container => ({ name: 'init', image: 'busybox', ...extra });
    expect(
      podPhase(pod('Never', [app()], [init({ restartPolicy: 'OnFailure' })]), [terminated('init', 1)], false),
    ).toBe('Pending');
    expect(
      podPhase(
        pod('Never', [app()], [init({ restartPolicy: 'Never', restartPolicyRules: on42 })]),
        [backingOff('init', 42)],
        false,
      ),
    ).toBe('Pending');
    expect(podPhase(pod('Never', [app()], [init({})]), [terminated('init', 1)], false)).toBe('Failed');
    expect(podPhase(pod('Always', [app()], [init({ restartPolicy: 'Never' })]), [terminated('init', 1)], false)).toBe(
      'Failed',
    );
    expect(podPhase(pod('Always', [app()], [init({})]), [backingOff('init', 1)], false)).toBe('Pending');
  });
});

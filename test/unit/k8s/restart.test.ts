import { describe, expect, it } from 'vitest';
import type { Container } from 'kubernetes-types/core/v1';
import type { ContainerRestartRule } from '../../../src/k8s/pod-api-additions.js';
import {
  containerShouldRestart,
  isRestartableInit,
  matchingRestartRule,
  podRestartPolicy,
  restartableInitContainers,
  restartsAfterProbeFailure,
} from '../../../src/k8s/restart.js';

const c = (name: string, restartPolicy?: string): Container => ({
  name,
  ...(restartPolicy !== undefined ? { restartPolicy } : {}),
});

describe('podRestartPolicy', () => {
  it('keeps OnFailure and Never, and reads anything else as the default Always', () => {
    expect(podRestartPolicy('OnFailure')).toBe('OnFailure');
    expect(podRestartPolicy('Never')).toBe('Never');
    expect(podRestartPolicy('Always')).toBe('Always');
    expect(podRestartPolicy(undefined)).toBe('Always');
    expect(podRestartPolicy('')).toBe('Always');
  });
});

describe('containerShouldRestart: the pod restartPolicy matrix, for a container without its own', () => {
  it.each([
    ['Always', 0, true],
    ['Always', 1, true],
    ['OnFailure', 0, false],
    ['OnFailure', 137, true],
    ['OnFailure', -1, true],
    ['Never', 0, false],
    ['Never', 1, false],
    [undefined, 0, true],
  ] as const)('pod %s after exit code %i: %s', (policy, exitCode, want) => {
    expect(containerShouldRestart(c('app'), policy, exitCode)).toBe(want);
  });
});

const rule = (operator: string, values: number[], action = 'Restart'): ContainerRestartRule => ({
  action,
  exitCodes: { operator, values },
});
const withRules = (restartPolicy: string | undefined, rules: ContainerRestartRule[]): Container => ({
  name: 'app',
  ...(restartPolicy !== undefined ? { restartPolicy } : {}),
  restartPolicyRules: rules,
});

// The cases of TestContainerHasRestartablePolicy (pkg/api/v1/pod/util_test.go): rules first, then the
// container's own policy, then the pod's.
describe('containerShouldRestart: rules, the container policy, the pod policy', () => {
  it.each([
    ['In matches with Restart', withRules('Never', [rule('In', [42, 50, 60])]), undefined, 42, true],
    ['NotIn matches with Restart', withRules('Never', [rule('NotIn', [0, 1, 2])]), undefined, 99, true],
    ['In does not match: the container policy', withRules('Never', [rule('In', [10, 20])]), undefined, 30, false],
    ['NotIn does not match: the container policy', withRules('Never', [rule('NotIn', [10, 20])]), undefined, 10, false],
    ['container Always', c('app', 'Always'), 'Never', 0, true],
    ['container OnFailure, exit 0', c('app', 'OnFailure'), 'Never', 0, false],
    ['container OnFailure, exit 1', c('app', 'OnFailure'), 'Never', 1, true],
    ['container Never over pod Always', c('app', 'Never'), 'Always', 1, false],
    ['pod Always', c('app'), 'Always', 0, true],
    ['pod OnFailure, exit 1', c('app'), 'OnFailure', 1, true],
    ['pod Never', c('app'), 'Never', 1, false],
    ['no policy at all', c('app'), undefined, 0, true],
  ] as const)('%s', (_name, container, podPolicy, exitCode, want) => {
    expect(containerShouldRestart(container, podPolicy, exitCode)).toBe(want);
  });

  it('reads rules only beside the container own restartPolicy', () => {
    expect(containerShouldRestart(withRules(undefined, [rule('In', [42])]), 'Never', 42)).toBe(false);
  });

  it('a matching rule of another action falls back to the container policy', () => {
    const restartAll = withRules('Never', [rule('In', [42], 'RestartAllContainers')]);
    expect(containerShouldRestart(restartAll, 'Always', 42)).toBe(false);
  });

  it('a sidecar (own policy Always) runs again after any exit, under any pod policy', () => {
    for (const pod of ['Always', 'OnFailure', 'Never'])
      for (const code of [0, 1, 137]) expect(containerShouldRestart(c('s', 'Always'), pod, code)).toBe(true);
  });
});

// The cases of TestFindMatchingContainerRestartRule.
describe('matchingRestartRule', () => {
  const ruleIn = rule('In', [42, 50, 60]);
  const ruleNotIn = rule('NotIn', [0, 1, 2]);
  const ruleIn42 = rule('In', [42]);
  it.each([
    ['a rule with In matches', [ruleIn], 42, ruleIn],
    ['a rule with NotIn matches', [ruleNotIn], 99, ruleNotIn],
    ['the first of two matching rules', [ruleIn, ruleIn42], 42, ruleIn],
    ['no rule matches', [ruleIn], 100, undefined],
    ['no rules', [], 0, undefined],
    ['an unknown operator matches nothing', [rule('Gt', [1])], 5, undefined],
    ['a rule without exitCodes matches nothing', [{ action: 'Restart' }], 5, undefined],
  ] as const)('%s', (_name, rules, exitCode, want) => {
    expect(matchingRestartRule({ name: 'app', restartPolicyRules: [...rules] }, exitCode)).toBe(want);
  });
});

describe('restartsAfterProbeFailure: the container policy, else the pod one; no rules (no exit code yet)', () => {
  it.each([
    [c('app'), 'Always', true],
    [c('app'), 'OnFailure', true],
    [c('app'), 'Never', false],
    [c('app', 'Never'), 'Always', false],
    [c('app', 'OnFailure'), 'Never', true],
    [c('s', 'Always'), 'Never', true],
    [withRules('Never', [rule('NotIn', [])]), 'Always', false],
  ] as const)('%j in a %s pod: %s', (container, podPolicy, want) => {
    expect(restartsAfterProbeFailure(container, podPolicy)).toBe(want);
  });
});

describe('restartable init containers (sidecars)', () => {
  it('is an init container whose own restartPolicy is Always, nothing else', () => {
    expect(isRestartableInit(c('s', 'Always'))).toBe(true);
    expect(isRestartableInit(c('i'))).toBe(false);
    expect(isRestartableInit(c('i', 'OnFailure'))).toBe(false);
    expect(isRestartableInit(undefined)).toBe(false);
  });

  it('picks the sidecars in their order', () => {
    const init = [c('a', 'Always'), c('b'), c('c', 'Always')];
    expect(restartableInitContainers(init).map((x) => x.name)).toEqual(['a', 'c']);
    expect(restartableInitContainers(undefined)).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import type { Container } from 'kubernetes-types/core/v1';
import {
  isRestartableInit,
  podRestartPolicy,
  restartableInitContainers,
  shouldRestart,
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

describe('shouldRestart', () => {
  it.each([
    ['Always', 0, true],
    ['Always', 1, true],
    ['OnFailure', 0, false],
    ['OnFailure', 137, true],
    ['OnFailure', -1, true],
    ['Never', 0, false],
    ['Never', 1, false],
  ] as const)('%s after exit code %i: %s', (policy, exitCode, want) => {
    expect(shouldRestart(policy, exitCode)).toBe(want);
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

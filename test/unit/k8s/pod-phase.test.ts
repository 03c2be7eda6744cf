import { describe, expect, it } from 'vitest';
import { isTerminalPhase } from '../../../src/k8s/pod-phase.js';

describe('isTerminalPhase', () => {
  it('is true for Succeeded and Failed only', () => {
    expect(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown', undefined].map(isTerminalPhase)).toEqual([
      false,
      false,
      true,
      true,
      false,
      false,
    ]);
  });
});

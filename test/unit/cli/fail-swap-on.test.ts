import { describe, expect, it } from 'vitest';
import { checkSwap, SwapOnError } from '../../../src/cli/fail-swap-on.js';

const HEADER = 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n';

describe('failSwapOn', () => {
  it('refuses to start while swap is on, naming the setting to change', () => {
    const swaps = HEADER + '/dev/dm-1                               partition\t4194300\t0\t-2\n';
    expect(() => checkSwap(true, swaps)).toThrow(SwapOnError);
    expect(() => checkSwap(true, swaps)).toThrow(
      'swap is on (/dev/dm-1): the kubelet does not run with swap; turn it off, or set --fail-swap-on=false (failSwapOn: false)',
    );
  });

  it('starts with swap off, or when told swap is fine', () => {
    expect(() => checkSwap(true, HEADER)).not.toThrow();
    expect(() => checkSwap(true, '')).not.toThrow();
    expect(() => checkSwap(false, HEADER + '/swapfile file 1024 0 -2\n')).not.toThrow();
  });
});

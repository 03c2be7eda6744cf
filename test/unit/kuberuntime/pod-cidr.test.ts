import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';
import { RuntimePodCIDR } from '../../../src/kuberuntime/pod-cidr.js';

describe('the pod CIDR handed to the runtime', () => {
  it('is sent once per new value, and again after the runtime refused it', async () => {
    const sent: string[] = [];
    let refuse = 1;
    const runtime = {
      updateRuntimeConfig: async (c: string) => {
        sent.push(c);
        if (c === '10.244.1.0/24,fd00:1::/64' && refuse-- > 0) throw new Error('14 UNAVAILABLE: connection refused');
      },
    };
    const { logger, lines } = memoryLogger(0);
    let updated = 0;
    const cidr = new RuntimePodCIDR(runtime, logger, () => updated++);
    await Promise.all([cidr.update('10.244.0.0/24'), cidr.update('10.244.0.0/24'), cidr.update('')]);
    expect(sent).toEqual(['10.244.0.0/24']);
    expect(cidr.podCIDR()).toBe('10.244.0.0/24');
    await cidr.update('10.244.1.0/24,fd00:1::/64');
    expect(cidr.podCIDR()).toBe('10.244.0.0/24');
    await cidr.update('10.244.1.0/24,fd00:1::/64');
    expect(cidr.podCIDR()).toBe('10.244.1.0/24,fd00:1::/64');
    expect(sent).toEqual(['10.244.0.0/24', '10.244.1.0/24,fd00:1::/64', '10.244.1.0/24,fd00:1::/64']);
    expect(updated).toBe(2);
    expect(lines.filter((l) => l.includes('Failed to update pod CIDR'))).toHaveLength(1);
    expect(lines.some((l) => l.includes('Updating Pod CIDR') && l.includes('10.244.0.0/24'))).toBe(true);
  });
});

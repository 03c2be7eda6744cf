// SupplementalGroupsPolicy=Strict (KEP-3619, GA 1.35) is admitted only where the runtime honours it
// (the Node's status.features.supplementalGroupsPolicy from the runtime's Status features: one entry of
// config/node-features.ts that the runtime decides); elsewhere it is refused in the kubelet's words. Merge, or no policy, is admitted anywhere.
import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { node, pod } from './pods.js';

const withPolicy = (name: string, policy?: string, critical = false) =>
  pod(name, {
    static: critical,
    spec: {
      ...(critical ? { priorityClassName: 'system-node-critical', priority: 2000001000 } : {}),
      securityContext: policy ? { supplementalGroupsPolicy: policy } : {},
    },
  });

describe('supplementalGroupsPolicy at admission', () => {
  it('Strict on a runtime without the feature: SupplementalGroupsPolicyNotSupported, critical pods too', () => {
    const refused = {
      admit: false,
      reason: 'SupplementalGroupsPolicyNotSupported',
      message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
    };
    expect(canAdmitPod(withPolicy('a', 'Strict'), [], node())).toEqual(refused);
    expect(
      canAdmitPod(
        withPolicy('b', 'Strict'),
        [],
        node({ features: { ...node().features, supplementalGroupsPolicy: false } }),
      ),
    ).toEqual(refused);
    expect(canAdmitPod(withPolicy('c', 'Strict', true), [], node())).toEqual(refused);
  });

  it('Strict where the runtime honours it, and Merge or nothing anywhere, are admitted', () => {
    expect(
      canAdmitPod(
        withPolicy('a', 'Strict'),
        [],
        node({ features: { ...node().features, supplementalGroupsPolicy: true } }),
      ).admit,
    ).toBe(true);
    expect(canAdmitPod(withPolicy('b', 'Merge'), [], node()).admit).toBe(true);
    expect(canAdmitPod(withPolicy('c'), [], node()).admit).toBe(true);
  });
});

// Admission of a pod that needs a node feature (the kubelet's declaredFeaturesAdmitHandler, after AppArmor's):
// refused with PodFeatureUnsupported and the kubelet's message naming every missing feature, sorted; the
// kubelet's own check of a field first; a pod found running at a restart is not stopped for what the runtime
// decides (its answer may not be there yet).
import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { node, pod } from './pods.js';

const restartAll = {
  name: 'c',
  image: 'i',
  restartPolicyRules: [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }],
};

describe('node features at admission', () => {
  it("refuses a pod that needs undeclared features, in the kubelet's words", () => {
    const p = pod('p', { containers: [restartAll], spec: { hostNetwork: true, hostUsers: false } });
    expect(canAdmitPod(p, [], node())).toEqual({
      admit: false,
      reason: 'PodFeatureUnsupported',
      message:
        'spec.containers[0].restartPolicyRules: Pod requires node features that are not available: ContainerRestartRules; ' +
        'Pod requires node features that are not available: RestartAllContainersOnContainerExits, UserNamespacesHostNetworkSupport',
    });
  });

  it("gives the kubelet's own refusal of a field first", () => {
    const p = pod('p', { containers: [restartAll], spec: { securityContext: { supplementalGroupsPolicy: 'Strict' } } });
    expect(canAdmitPod(p, [], node())).toEqual({
      admit: false,
      reason: 'SupplementalGroupsPolicyNotSupported',
      message: 'SupplementalGroupsPolicy=Strict is not supported in this node',
    });
  });

  it('admits a pod that needs none; one found running is refused only for what no runtime gives', () => {
    expect(canAdmitPod(pod('p'), [], node())).toEqual({ admit: true, preempt: [] });
    expect(
      canAdmitPod(pod('p', { containers: [restartAll] }), [], node(), { skipIgnorableChecks: true }),
    ).toMatchObject({
      admit: false,
      reason: 'PodFeatureUnsupported',
    });
  });

  it('comes after the resources and AppArmor, before the node shutting down', () => {
    const big = pod('p', { containers: [{ ...restartAll, resources: { requests: { cpu: '100' } } }] });
    expect(canAdmitPod(big, [], node())).toMatchObject({ admit: false, reason: 'OutOfcpu' });
    expect(canAdmitPod(pod('p', { containers: [restartAll] }), [], node({ shuttingDown: true }))).toMatchObject({
      reason: 'PodFeatureUnsupported',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { canAdmitPod } from '../../../src/admission/can-admit.js';
import { hostPortConflict } from '../../../src/admission/host-ports.js';
import { matchesRequiredNodeAffinity } from '../../../src/admission/node-affinity.js';
import { node, pod } from './pods.js';

const AFFINITY = {
  admit: false,
  reason: 'NodeAffinity',
  message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
};

function withPort(name: string, hostPort: number, extra: { hostIP?: string; protocol?: string } = {}) {
  return pod(name, {
    containers: [{ name: 'c', image: 'i', ports: [{ containerPort: hostPort, hostPort, ...extra }] }],
  });
}

describe('node affinity and selector', () => {
  it('refuses a nodeSelector the node labels do not satisfy', () => {
    expect(canAdmitPod(pod('a', { spec: { nodeSelector: { disk: 'hdd' } } }), [], node())).toEqual(AFFINITY);
    expect(canAdmitPod(pod('a', { spec: { nodeSelector: { disk: 'ssd' } } }), [], node()).admit).toBe(true);
  });

  it('a static (critical) pod is refused for affinity too: preemption cannot help it', () => {
    expect(canAdmitPod(pod('a', { static: true, spec: { nodeSelector: { disk: 'hdd' } } }), [], node())).toEqual(
      AFFINITY,
    );
  });

  it('matches required terms: any term, every expression, the operators and metadata.name', () => {
    const labels = { disk: 'ssd', cores: '8' };
    const req = (terms: object[]) =>
      pod('a', {
        spec: {
          affinity: {
            nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms as never } },
          },
        },
      });
    expect(
      matchesRequiredNodeAffinity(
        req([
          { matchExpressions: [{ key: 'disk', operator: 'In', values: ['hdd'] }] },
          { matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['4'] }] },
        ]),
        labels,
        'n1',
      ),
    ).toBe(true);
    expect(
      matchesRequiredNodeAffinity(
        req([
          {
            matchExpressions: [
              { key: 'disk', operator: 'Exists' },
              { key: 'gpu', operator: 'Exists' },
            ],
          },
        ]),
        labels,
        'n1',
      ),
    ).toBe(false);
    expect(
      matchesRequiredNodeAffinity(
        req([
          {
            matchExpressions: [
              { key: 'gpu', operator: 'DoesNotExist' },
              { key: 'disk', operator: 'NotIn', values: ['hdd'] },
            ],
          },
        ]),
        labels,
        'n1',
      ),
    ).toBe(true);
    expect(
      matchesRequiredNodeAffinity(
        req([{ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['x'] }] }]),
        labels,
        'n1',
      ),
    ).toBe(false);
    expect(
      matchesRequiredNodeAffinity(
        req([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }]),
        labels,
        'n1',
      ),
    ).toBe(true);
    expect(
      matchesRequiredNodeAffinity(
        req([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] }]),
        labels,
        'n1',
      ),
    ).toBe(false);
    expect(matchesRequiredNodeAffinity(req([{}]), labels, 'n1')).toBe(false);
  });
});

describe('node name, OS and taints', () => {
  it('refuses a pod bound to another node (NodeName)', () => {
    expect(canAdmitPod(pod('a', { spec: { nodeName: 'other' } }), [], node())).toEqual({
      admit: false,
      reason: 'NodeName',
      message: "Predicate NodeName failed: node(s) didn't match the requested node name",
    });
    expect(canAdmitPod(pod('a', { spec: { nodeName: 'n1' } }), [], node()).admit).toBe(true);
  });

  it('refuses a pod labelled for another OS, and one whose os field is not linux', () => {
    const p = pod('a');
    p.metadata!.labels = { 'kubernetes.io/os': 'windows' };
    expect(canAdmitPod(p, [], node())).toEqual({
      admit: false,
      reason: 'PodOSSelectorNodeLabelDoesNotMatch',
      message: "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
    });
    expect(canAdmitPod(pod('b', { spec: { os: { name: 'windows' } } }), [], node())).toEqual({
      admit: false,
      reason: 'PodOSNotSupported',
      message: "Failed to admit pod as the OS field doesn't match node OS",
    });
  });

  it('refuses an API pod that does not tolerate a NoExecute taint; a static pod is exempt', () => {
    const tainted = node({
      taints: [
        { key: 'k', value: 'v', effect: 'NoExecute' },
        { key: 'other', effect: 'NoSchedule' },
      ],
    });
    expect(canAdmitPod(pod('a'), [], tainted)).toEqual({
      admit: false,
      reason: 'TaintToleration',
      message: "Predicate TaintToleration failed: node(s) had taints that the pod didn't tolerate",
    });
    expect(
      canAdmitPod(pod('a', { spec: { tolerations: [{ key: 'k', operator: 'Exists' }] } }), [], tainted).admit,
    ).toBe(true);
    expect(canAdmitPod(pod('a', { static: true }), [], tainted).admit).toBe(true);
  });

  it('skips affinity and taints for a pod that already runs, never the node name', () => {
    const p = pod('a', { spec: { nodeSelector: { disk: 'hdd' } } });
    expect(canAdmitPod(p, [], node(), { skipIgnorableChecks: true }).admit).toBe(true);
    expect(canAdmitPod(pod('b', { spec: { nodeName: 'x' } }), [], node(), { skipIgnorableChecks: true }).admit).toBe(
      false,
    );
  });
});

describe('host ports', () => {
  it('refuses a host port an admitted pod holds on the same protocol and address (NodePorts)', () => {
    expect(canAdmitPod(withPort('b', 8080), [withPort('a', 8080)], node())).toEqual({
      admit: false,
      reason: 'NodePorts',
      message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    });
  });

  it('0.0.0.0 or no address takes every address; protocols and distinct addresses do not clash', () => {
    expect(hostPortConflict(withPort('b', 53, { protocol: 'UDP' }), [withPort('a', 53)])).toBeUndefined();
    expect(
      hostPortConflict(withPort('b', 80, { hostIP: '10.0.0.1' }), [withPort('a', 80, { hostIP: '10.0.0.2' })]),
    ).toBeUndefined();
    expect(hostPortConflict(withPort('b', 80, { hostIP: '10.0.0.1' }), [withPort('a', 80)])).toBeDefined();
    expect(hostPortConflict(withPort('b', 80), [withPort('a', 80, { hostIP: '10.0.0.2' })])).toBeDefined();
  });
});

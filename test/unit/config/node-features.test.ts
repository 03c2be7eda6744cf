// The one list of node features: how a pod needs each (the kubelet's declared-features tests, as facts), which a
// node declares (the registry of 1.36 and its gates' defaults), and that bootlet declares only what it does.
import type { Container, Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import {
  declaredFeatures,
  missingFeatures,
  NODE_FEATURES,
  type NodeFeature,
  type NodeFeatureFacts,
} from '../../../src/config/node-features';
import { unhonouredFields } from '../../../src/config/unhonoured-fields';
import { nodeFeatureRefusal } from '../../../src/admission/node-features';

const FACTS: NodeFeatureFacts = { runtimeVersion: 'containerd://1.6.20', runtimeHandlers: [] };

/** component-helpers/nodedeclaredfeatures/features/registry.go at release-1.36. */
const REGISTRY_1_36 = [
  'ExtendWebSocketsToKubelet',
  'InPlacePodLevelResourcesVerticalScaling',
  'InPlacePodVerticalScalingInitContainers',
  'RestartAllContainersOnContainerExits',
  'UserNamespacesHostNetworkSupport',
];

const feature = (name: string): NodeFeature => NODE_FEATURES.find((f) => f.name === name)!;
const podWith = (spec: Partial<NonNullable<Pod['spec']>>): Pod => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u' },
  spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
});
const restartAll: Container = {
  name: 'c',
  image: 'i',
  restartPolicyRules: [{ action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [42] } }],
};
const restartOnly: Container = {
  name: 'c',
  image: 'i',
  restartPolicyRules: [{ action: 'Restart', exitCodes: { operator: 'In', values: [42] } }],
};

describe('the node features', () => {
  it('are named once each, and the declared ones are the kubelet registry of 1.36', () => {
    const names = NODE_FEATURES.map((f) => f.name);
    expect(names.length).toBe(new Set(names).size);
    expect(NODE_FEATURES.filter((f) => f.declared).map((f) => f.name)).toEqual(REGISTRY_1_36);
  });

  it('a node that implemented them all would declare what a 1.36 kubelet with default gates does', () => {
    const all = NODE_FEATURES.map((f) => ({ ...f, implemented: true }));
    expect(declaredFeatures(FACTS, all)).toEqual([
      'ExtendWebSocketsToKubelet',
      'InPlacePodLevelResourcesVerticalScaling',
      'InPlacePodVerticalScalingInitContainers',
      'RestartAllContainersOnContainerExits',
    ]);
  });

  it('gives a list the API server takes: sorted, unique, each name as registry.go validates it', () => {
    const all = declaredFeatures(
      FACTS,
      NODE_FEATURES.map((f) => ({ ...f, implemented: true })),
    );
    expect(all).toEqual([...new Set(all)].sort());
    for (const name of NODE_FEATURES.map((f) => f.name)) {
      expect(name).toMatch(/^[A-Z][a-zA-Z0-9]*(\/[a-zA-Z][a-zA-Z0-9]*)*$/);
      expect(name.length).toBeLessThanOrEqual(253);
    }
  });

  // restart_all_containers_test.go's InferForScheduling table.
  it.each([
    ['an init container with the RestartAllContainers rule', { initContainers: [restartAll] }, true],
    ['a regular container with the rule', { containers: [restartAll] }, true],
    ['no rules', {}, false],
    ['a rule that restarts only its container', { containers: [restartOnly] }, false],
  ])('RestartAllContainersOnContainerExits: %s → needed %s', (_, spec, needed) => {
    expect(feature('RestartAllContainersOnContainerExits').needs(podWith(spec)).length > 0).toBe(needed);
  });

  // user_namespaces_host_network_test.go's InferForScheduling cases.
  it.each([
    [{ hostNetwork: true, hostUsers: false }, true],
    [{ hostNetwork: true }, false],
    [{ hostNetwork: true, hostUsers: true }, false],
    [{ hostUsers: false }, false],
  ])('UserNamespacesHostNetworkSupport: %j → needed %s', (spec, needed) => {
    expect(feature('UserNamespacesHostNetworkSupport').needs(podWith(spec)).length > 0).toBe(needed);
  });

  it('the features only an update needs are needed by no new pod', () => {
    const full = podWith({
      resources: { requests: { cpu: '1' } },
      initContainers: [{ name: 'i', image: 'i', resources: { requests: { cpu: '1' } } }],
    });
    for (const name of [
      'ExtendWebSocketsToKubelet',
      'InPlacePodLevelResourcesVerticalScaling',
      'InPlacePodVerticalScalingInitContainers',
    ])
      expect(feature(name).needs(full)).toEqual([]);
  });

  it('bootlet declares no feature whose pod fields it refuses, and refuses none it declares', () => {
    const declared = new Set(declaredFeatures(FACTS));
    const pods = [
      podWith({ containers: [restartAll] }),
      podWith({ hostNetwork: true, hostUsers: false }),
      podWith({ volumes: [{ name: 'v', image: { reference: 'r/m:1' } }] }),
      podWith({ resourceClaims: [{ name: 'g', resourceClaimName: 'gc' }] }),
      podWith({ securityContext: { supplementalGroupsPolicy: 'Strict' } }),
    ];
    for (const p of pods) {
      const refused = new Set(missingFeatures(p, FACTS).map((m) => m.feature.name));
      for (const name of refused) expect(declared.has(name), name).toBe(false);
      const needed = NODE_FEATURES.filter((f) => f.needs(p).length > 0).map((f) => f.name);
      for (const name of needed.filter((n) => declared.has(n))) expect(refused.has(name), name).toBe(false);
    }
  });

  describe('a feature the runtime decides', () => {
    // As a runtime-decided feature is written: declared where the default handler has user namespaces.
    const byRuntime: NodeFeature = {
      name: 'UserNamespacesHostNetworkSupport',
      declared: true,
      needs: (pod) => (pod.spec?.hostNetwork && pod.spec.hostUsers === false ? [['spec', 'hostUsers']] : []),
      implemented: (n) => n.runtimeHandlers.some((h) => h.name === '' && h.features?.userNamespaces === true),
    };
    const withUserns: NodeFeatureFacts = {
      runtimeVersion: 'containerd://2.1.9',
      runtimeHandlers: [{ name: '', features: { userNamespaces: true, recursiveReadOnlyMounts: true } }],
    };
    const pod = podWith({ hostNetwork: true, hostUsers: false });

    it('is declared only where the runtime says so and its gate is on (user_namespaces_host_network_test.go)', () => {
      // Its gate is off by default in 1.36: not declared even where the runtime supports it.
      expect(declaredFeatures(withUserns, [byRuntime])).toEqual([]);
      const gateOn = { ...byRuntime, name: 'RestartAllContainersOnContainerExits' };
      expect(declaredFeatures(withUserns, [gateOn])).toEqual(['RestartAllContainersOnContainerExits']);
      expect(declaredFeatures(FACTS, [gateOn])).toEqual([]);
    });

    it('is not refused at the source (no runtime known there), and refused at admission where the runtime lacks it', () => {
      expect(missingFeatures(pod, undefined, [byRuntime])).toEqual([]);
      expect(nodeFeatureRefusal(pod, withUserns, [byRuntime])).toBeUndefined();
      expect(nodeFeatureRefusal(pod, FACTS, [byRuntime])).toEqual({
        admit: false,
        reason: 'PodFeatureUnsupported',
        message: 'Pod requires node features that are not available: UserNamespacesHostNetworkSupport',
      });
    });
  });

  it("refuses at the source, per field, a feature no kubelet declares that bootlet lacks; a declared one is admission's", () => {
    expect(unhonouredFields(podWith({ containers: [restartAll] }))).toEqual([
      {
        path: 'spec.containers[0].restartPolicyRules',
        reason: 'PodFeatureUnsupported',
        message: 'Pod requires node features that are not available: ContainerRestartRules',
      },
    ]);
    const declaredOnly = { ...feature('ContainerRestartRules'), implemented: true };
    const list = NODE_FEATURES.map((f) => (f.name === declaredOnly.name ? declaredOnly : f));
    expect(nodeFeatureRefusal(podWith({ containers: [restartAll] }), FACTS, list)).toEqual({
      admit: false,
      reason: 'PodFeatureUnsupported',
      message: 'Pod requires node features that are not available: RestartAllContainersOnContainerExits',
    });
  });
});

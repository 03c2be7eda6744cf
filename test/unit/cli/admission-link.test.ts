import { describe, expect, it } from 'vitest';
import { collectNodeInfo } from '../../../src/node/node-info.js';
import { linkAdmission, nodeFactsOf } from '../../../src/cli/admission-link.js';
import { createLogger } from '../../../src/log/logger.js';
import type { PodEvent } from '../../../src/podworkers/observer.js';
import { StatusManager } from '../../../src/status/status-manager.js';
import { probes } from '../status/fixtures.js';
import { staticPod } from '../admission/pods.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const info = (maxPods: number) =>
  collectNodeInfo({
    nodeName: 'n1',
    nodeIP: '10.0.0.1',
    runtimeVersion: 'containerd://x',
    kubeletVersion: 'v1',
    labels: { role: 'cp' },
    taints: [{ key: 'k', effect: 'NoExecute' }],
    runtimeReady: () => true,
    maxPods,
  });

/** Admission linked to a status manager, admitting; what it applies and the events it tells are kept. */
function admitting(maxPods: number, appArmor: { error?: string }) {
  const status = new StatusManager({
    runtimePod: () => undefined,
    pods: () => [],
    probes: probes(),
    nodeIP: '10.0.0.1',
    runtimeName: 'containerd',
    logger,
  });
  const events: PodEvent[] = [];
  const applied: string[] = [];
  const a = linkAdmission({
    nodeInfo: info(maxPods),
    appArmor,
    apply: (u) => void applied.push(u.pod.uid),
    stop: () => {},
    stopped: () => Promise.resolve(),
    status,
    observers: [{ podEvent: (e) => void events.push(e) }],
    logger,
  });
  a.startAdmitting(() => false);
  return { a, status, events, applied };
}

describe('admission wiring', () => {
  it('gives admission the labels, allocatable and taints the Node is registered with', () => {
    const n = info(7);
    const facts = nodeFactsOf(n);
    expect(facts.labels).toMatchObject({ 'kubernetes.io/hostname': 'n1', 'kubernetes.io/os': 'linux', role: 'cp' });
    expect(facts.allocatable.pods).toBe(7);
    expect(facts.allocatable.milliCPU).toBe(Number(n.allocatable().cpu) * 1000);
    expect(facts.allocatable.memory).toBeGreaterThan(0);
    expect(facts.taints).toEqual([{ key: 'k', effect: 'NoExecute' }]);
  });

  it('reads labels and taints from the Node the server holds once the API side has it, as the kubelet reads its informer', () => {
    const n = info(7);
    const facts = nodeFactsOf(n, undefined, undefined, {
      metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1', role: 'worker' } },
      spec: { taints: [{ key: 'dedicated', value: 'etcd', effect: 'NoExecute' }] },
    });
    expect(facts.labels).toEqual({ 'kubernetes.io/hostname': 'n1', role: 'worker' });
    expect(facts.taints).toEqual([{ key: 'dedicated', value: 'etcd', effect: 'NoExecute' }]);
    // Allocatable stays the agent's own figure, the one it reports.
    expect(facts.allocatable.pods).toBe(7);
    expect(nodeFactsOf(n, undefined, undefined, { metadata: { name: 'n1' } }).taints).toEqual([]);
  });

  it('a refusal is Failed in the status manager with "Pod was rejected: " and told as a Warning event', () => {
    const { a, status, events, applied } = admitting(1, {});
    a.update({ op: 'ADD', pod: staticPod('x') });
    a.update({ op: 'ADD', pod: staticPod('y', { spec: { nodeSelector: { role: 'worker' } } }) });
    expect(applied).toEqual(['uid-x']);
    expect(status.get('uid-y')?.status).toEqual({
      phase: 'Failed',
      reason: 'NodeAffinity',
      message: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
      qosClass: 'BestEffort',
    });
    expect(events).toEqual([
      {
        uid: 'uid-y',
        namespace: 'default',
        name: 'y',
        type: 'Warning',
        reason: 'NodeAffinity',
        message: "Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
      },
    ]);
  });

  it("an AppArmor pod on a host without AppArmor: Failed, reason AppArmor, in the kubelet's words", () => {
    const { a, status, events, applied } = admitting(10, { error: 'AppArmor is not enabled on the host' });
    a.update({
      op: 'ADD',
      pod: staticPod('confined', {
        containers: [{ name: 'c', image: 'i', securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }],
      }),
    });
    expect(applied).toEqual([]);
    expect(status.get('uid-confined')?.status).toMatchObject({
      phase: 'Failed',
      reason: 'AppArmor',
      message: 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host',
    });
    expect(events).toMatchObject([
      { type: 'Warning', reason: 'AppArmor', message: 'Cannot enforce AppArmor: AppArmor is not enabled on the host' },
    ]);
  });
});

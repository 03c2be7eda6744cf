import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { StaticPod } from '../../../src/config/types.js';
import { refusedPodStatus } from '../../../src/status/refused-status.js';
import { StatusManager } from '../../../src/status/status-manager.js';
import { probes, staticPod } from './fixtures.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });

describe('a pod refused at admission', () => {
  it('is Failed with the reason and message, its QoS class kept, and no container status', () => {
    expect(refusedPodStatus(staticPod(), 'OutOfpods', 'Pod was rejected: x')).toEqual({
      phase: 'Failed',
      reason: 'OutOfpods',
      message: 'Pod was rejected: x',
      qosClass: 'BestEffort',
    });
  });

  it('is listed and told with that status though no worker has it, survives a full pass, and goes when forgotten', async () => {
    const m = new StatusManager({
      runtimePod: () => undefined,
      pods: () => [],
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
    });
    const pod = staticPod();
    const sp: StaticPod = {
      pod,
      uid: pod.metadata.uid,
      key: `${pod.metadata.namespace}/${pod.metadata.name}`,
      file: '/m/web.yaml',
    };
    const seen: string[] = [];
    m.onChange((uid, e) => seen.push(`${uid}:${e?.status.reason ?? 'gone'}`));
    m.setRefused(sp, refusedPodStatus(pod, 'NodeAffinity', 'Pod was rejected: no'));
    m.updateAll();
    await m.idle();
    expect(m.get(sp.uid)?.status.phase).toBe('Failed');
    expect(m.all().map((e) => e.status.reason)).toEqual(['NodeAffinity']);
    m.forgetRefused(sp.uid);
    expect(m.get(sp.uid)).toBeUndefined();
    expect(seen).toEqual([`${sp.uid}:NodeAffinity`, `${sp.uid}:gone`]);
  });
});

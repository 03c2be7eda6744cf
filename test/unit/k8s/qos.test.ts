import { describe, expect, it } from 'vitest';
import { qosClass } from '../../../src/k8s/qos.js';
import { container, pod } from '../kuberuntime/fixtures.js';

describe('qosClass', () => {
  it('follows the API rules', () => {
    const g = { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1000m', memory: '1Gi' } };
    expect(qosClass(pod({ spec: { containers: [container({ resources: g })] } }))).toBe('Guaranteed');
    expect(qosClass(pod({ spec: { containers: [container({ resources: g }), container({ name: 'b' })] } }))).toBe(
      'Burstable',
    );
    expect(qosClass(pod({ spec: { containers: [container({ resources: { limits: { cpu: '1' } } })] } }))).toBe(
      'Burstable',
    );
    expect(qosClass(pod({ spec: { containers: [container({ resources: { requests: { cpu: '0' } } })] } }))).toBe(
      'BestEffort',
    );
    expect(qosClass(pod())).toBe('BestEffort');
    const initBigger = pod({
      spec: {
        initContainers: [
          container({
            name: 'i',
            resources: { requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } },
          }),
        ],
        containers: [container({ resources: g })],
      },
    });
    expect(qosClass(initBigger)).toBe('Guaranteed');
  });
});

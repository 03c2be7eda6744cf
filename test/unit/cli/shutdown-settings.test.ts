import { describe, expect, it } from 'vitest';
import { ConfigFileError, parseKubeletConfig } from '../../../src/cli/kubelet-config.js';
import { SETTING_BY_FIELD } from '../../../src/cli/settings/table.js';

const header = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
const parse = (body: string) => parseKubeletConfig('/etc/bootlet/config.yaml', header + body);
const valueOf = (body: string, field: string): unknown => parse(body).values.get(SETTING_BY_FIELD.get(field)!)?.value;

describe('graceful node shutdown settings', () => {
  it("are applied settings, and kubeadm's zero values leave them at the default (off)", () => {
    for (const f of ['shutdownGracePeriod', 'shutdownGracePeriodCriticalPods', 'shutdownGracePeriodByPodPriority'])
      expect(SETTING_BY_FIELD.get(f)?.status).toBe('applied');
    expect(parse('shutdownGracePeriod: 0s\nshutdownGracePeriodCriticalPods: 0s\n').values.size).toBe(0);
  });

  it('reads the durations and the list by priority', () => {
    expect(valueOf('shutdownGracePeriod: 30s\n', 'shutdownGracePeriod')).toBe(30_000);
    expect(
      valueOf(
        'shutdownGracePeriodByPodPriority: [{priority: 100000, shutdownGracePeriodSeconds: 10}, {priority: 0}]\n',
        'shutdownGracePeriodByPodPriority',
      ),
    ).toEqual([
      { priority: 100000, shutdownGracePeriodSeconds: 10 },
      { priority: 0, shutdownGracePeriodSeconds: 0 },
    ]);
  });

  it('refuses a list entry that is not one, naming the field', () => {
    expect(() => parse('shutdownGracePeriodByPodPriority: [{priority: high}]\n')).toThrow(ConfigFileError);
    expect(() => parse('shutdownGracePeriodByPodPriority: [{priority: high}]\n')).toThrow(
      /shutdownGracePeriodByPodPriority.*priority must be an integer/,
    );
  });
});

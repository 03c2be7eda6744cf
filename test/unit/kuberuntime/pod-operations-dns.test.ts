// The node's DNS settings (resolvConf, clusterDNS, clusterDomain) reach the sandbox a pod worker asks for.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { ImageService, PodSandboxConfig, RuntimeService } from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { pod } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'bootlet-dns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runtimeWith(o: { resolvConf: string | undefined; clusterDNS?: string[]; clusterDomain?: string }): {
  pods: CriPodRuntime;
  sandboxes: PodSandboxConfig[];
} {
  const sandboxes: PodSandboxConfig[] = [];
  const runtime = {
    runPodSandbox: async (c: PodSandboxConfig) => (sandboxes.push(c), 'sb-1'),
    podSandboxStatus: async () => ({ network: { ip: '10.1.0.5', additionalIps: [] } }),
  } as unknown as RuntimeService;
  const pods = new CriPodRuntime({
    runtime,
    images: {} as ImageService,
    rootDir: join(dir, 'root'),
    podLogsDir: join(dir, 'pods'),
    nodeName: 'node1',
    nodeIP: '10.0.0.7',
    logger: createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } }),
    ...o,
  });
  return { pods, sandboxes };
}

describe('sandbox DNS from the node settings', () => {
  it('gives a pod that is not hostNetwork the cluster DNS and search path', async () => {
    const { pods, sandboxes } = runtimeWith({
      resolvConf: 'nameserver 192.0.2.53\nsearch corp.example\n',
      clusterDNS: ['10.96.0.10'],
      clusterDomain: 'cluster.local',
    });
    await pods.createSandbox(pod(), 0);
    expect(sandboxes[0]!.dnsConfig).toEqual({
      servers: ['10.96.0.10'],
      searches: ['kube-system.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'],
      options: ['ndots:5'],
    });
  });

  it('gives a hostNetwork pod the host resolver, and none at all when resolvConf is ""', async () => {
    const host = runtimeWith({
      resolvConf: 'nameserver 192.0.2.53\n',
      clusterDNS: ['10.96.0.10'],
      clusterDomain: 'cluster.local',
    });
    await host.pods.createSandbox(pod({ spec: { hostNetwork: true } }), 0);
    expect(host.sandboxes[0]!.dnsConfig?.servers).toEqual(['192.0.2.53']);
    const none = runtimeWith({ resolvConf: undefined });
    await none.pods.createSandbox(pod({ spec: { hostNetwork: true } }), 0);
    expect(none.sandboxes[0]!.dnsConfig).toEqual({ servers: ['127.0.0.1'], searches: ['.'], options: [] });
  });
});

// A pod-network pod's IPs come from its sandbox's status (PodSandboxStatus.network) and reach its
// containers as the kubelet hands them on: the status.podIP/podIPs env and the managed /etc/hosts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { ContainerConfig, ImageService, RuntimeService } from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { container, pod } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'bootlet-pod-ips-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function podRuntime(): { pods: CriPodRuntime; created: ContainerConfig[] } {
  const created: ContainerConfig[] = [];
  const runtime = {
    runPodSandbox: async () => 'sb-1',
    podSandboxStatus: async () => ({ network: { ip: '10.85.0.7', additionalIps: [{ ip: 'fd00:10:85::7' }] } }),
    createContainer: async (_id: string, c: ContainerConfig) => (created.push(c), 'c-1'),
    startContainer: async () => {},
  } as unknown as RuntimeService;
  const images = { imageStatus: async () => ({ id: 'sha256:busybox' }) } as unknown as ImageService;
  const pods = new CriPodRuntime({
    runtime,
    images,
    rootDir: join(dir, 'root'),
    podLogsDir: join(dir, 'pods'),
    nodeName: 'node1',
    nodeIP: '10.0.0.7',
    resolvConf: '',
    clusterDomain: 'cluster.local',
    logger: createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } }),
  });
  return { pods, created };
}

const env = [
  { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
  { name: 'POD_IPS', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIPs' } } },
];

describe('pod IPs from the sandbox status', () => {
  it("a pod-network pod: the sandbox ref carries every IP, the env and /etc/hosts the pod's own", async () => {
    const { pods, created } = podRuntime();
    const p = pod({ spec: { hostname: 'dns', subdomain: 'cluster-dns', containers: [container({ env })] } });
    const sandbox = await pods.createSandbox(p, 0);
    expect(sandbox).toMatchObject({ ip: '10.85.0.7', additionalIps: ['fd00:10:85::7'] });
    await pods.startContainer(p, sandbox, p.spec!.containers[0]!, 'container', 0);
    const config = created[0]!;
    expect(config.envs).toEqual(
      expect.arrayContaining([
        { key: 'POD_IP', value: '10.85.0.7' },
        { key: 'POD_IPS', value: '10.85.0.7,fd00:10:85::7' },
      ]),
    );
    const hosts = config.mounts?.find((m) => m.containerPath === '/etc/hosts');
    expect(hosts).toBeDefined();
    const text = readFileSync(hosts!.hostPath!, 'utf8');
    expect(text.startsWith('# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n')).toBe(true);
    expect(text).toContain('10.85.0.7\tdns.cluster-dns.kube-system.svc.cluster.local\tdns\n');
    expect(text).toContain('fd00:10:85::7\tdns.cluster-dns.kube-system.svc.cluster.local\tdns\n');
  });

  it("a host-network pod: the node's IP, and no sandbox status read", async () => {
    const { pods, created } = podRuntime();
    const p = pod({ spec: { hostNetwork: true, containers: [container({ env })] } });
    const sandbox = await pods.createSandbox(p, 0);
    expect(sandbox).toMatchObject({ ip: '', additionalIps: [] });
    await pods.startContainer(p, sandbox, p.spec!.containers[0]!, 'container', 0);
    expect(created[0]!.envs).toEqual(expect.arrayContaining([{ key: 'POD_IP', value: '10.0.0.7' }]));
  });
});

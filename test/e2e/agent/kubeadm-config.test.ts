// The packaged agent started with the KubeletConfiguration kubeadm writes (each version) and the
// flags of kubeadm's drop-in and kubeadm-flags.env: it starts, names once what it does not do, and
// runs its pods. Only what must point at this test's containerd and directories is overridden, by
// flags (which win over the file, as in the kubelet).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { BOOTLET_EXE } from '../../support/agent.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';
import { KUBEADM_VERSIONS } from '../../support/kubeadm-versions.js';

const NODE = 'kubeadm-e2e';
const PENDING = new Set([
  '--bootstrap-kubeconfig',
  'rotateCertificates',
  'cgroupDriver',
  'authentication.x509.clientCAFile',
]);
const h = useAgentHarness('kubeadm-config', NODE);

function kubeletFiles(v: string): string {
  const exact = fileURLToPath(new URL(`../../fixtures/kubeadm/${v}/kubelet/`, import.meta.url));
  return exact;
}

const sleeper = `apiVersion: v1
kind: Pod
metadata: {name: sleeper, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;

describe.each(KUBEADM_VERSIONS)("kubeadm %s's kubelet files", (v) => {
  it('start the packaged agent, which runs its pods', async () => {
    const dir = kubeletFiles(v);
    // The test keeps pod logs in its own directory: the one line added to kubeadm's file.
    const config = path.join(h.dir, `config-${v}.yaml`);
    fs.writeFileSync(config, fs.readFileSync(path.join(dir, 'config.yaml'), 'utf8') + `podLogsDir: ${h.podLogsDir}\n`);
    const kubeadmArgs =
      /KUBELET_KUBEADM_ARGS="([^"]*)"/.exec(fs.readFileSync(path.join(dir, 'kubeadm-flags.env'), 'utf8'))?.[1] ?? '';
    const passOn = kubeadmArgs
      .split(/\s+/)
      .filter((a) => a !== '' && !a.startsWith('--container-runtime-endpoint=') && !a.startsWith('--node-ip='));
    if (!fs.existsSync(path.join(h.manifests, 'sleeper.yaml'))) h.write('sleeper.yaml', sleeper);
    // The test containerd uses cgroupfs; kubeadm's file says systemd.
    const agent = h.launch({ configFile: config, extraArgs: ['--v=2', '--cgroup-driver=cgroupfs', ...passOn] });
    try {
      await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'agent ready', 60_000);
      await waitFor(
        async () => (await h.pods('sleeper'))[0]?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING),
        { timeoutMs: 60_000, what: 'sleeper running' },
      );
      // At most one line, naming only what other parts of bootlet are still building.
      const warnings = agent.records().filter((r) => r.msg === 'Settings that bootlet does not implement are ignored');
      expect(warnings.length).toBeLessThanOrEqual(1);
      const named = String(warnings[0]?.settings ?? '')
        .split(',')
        .filter(Boolean);
      expect(named.filter((n) => !PENDING.has(n))).toEqual([]);
      expect(agent.records().some((r) => String(r.msg).startsWith('Unknown KubeletConfiguration fields'))).toBe(false);
      expect(agent.proc.exitCode).toBeNull();
    } finally {
      await agent.kill('SIGTERM');
    }
  });
});

describe('kubeadm preflight', () => {
  it('reads `bootlet --version` as it reads `kubelet --version`', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(BOOTLET_EXE, ['--version'], (err, stdout) => (err ? reject(err) : resolve(stdout))),
    );
    expect(out).toMatch(/^Kubernetes v1\.36\.0\+bootlet\.[0-9A-Za-z.-]+\n$/);
  });
});

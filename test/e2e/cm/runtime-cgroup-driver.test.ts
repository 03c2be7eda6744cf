// The cgroup driver comes from the runtime where it says (CRI RuntimeConfig: containerd 2.x), as
// the kubelet takes it since 1.34 (KubeletCgroupDriverFromCRI): containerd 2.1 with runc's
// SystemdCgroup = false runs a node whose KubeletConfiguration says systemd (kubeadm's default) on
// cgroupfs, with the kubelet's line naming both. containerd 1.7 answers UNIMPLEMENTED: the setting
// is used, with the kubelet's line for that. (SystemdCgroup = true on 2.1, against a real systemd:
// test/e2e/cm/systemd-driver.test.ts run with BOOTLET_TEST_CONTAINERD=2.1.)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ContainerdVersion } from '../../../dev/containerd-versions.js';
import { TEST_IMAGES } from '../../../dev/images.js';
import { detectCgroupSubsystems } from '../../../src/cm/cgroup-subsystems.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { getFromAgentSocket } from '../../support/agent-socket.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from '../agent/harness.js';

const subsystems = detectCgroupSubsystems();

const manifest = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: default
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    resources:
      requests: {cpu: 50m, memory: 16Mi}
`;

const LOSING_SUPPORT = /^kubelet_cri_losing_support\{version="1\.36\.0"\} 1$/m;

/** The memory hierarchy's directory of a cgroupfs path (the v2 tree on a unified host). */
function memoryDir(rel: string): string {
  return subsystems.version === 2
    ? path.join(subsystems.mountpoint, rel)
    : path.join(subsystems.mountpoints.get('memory')!, rel);
}

function useNode(version: ContainerdVersion, setting: 'systemd' | 'cgroupfs') {
  const node = `node-driver-${version.replace('.', '-')}`;
  const h = useAgentHarness(`driver-${version}`, node, { extraArgs: ['--v=4'] }, () => ({ version }));
  const config = () => {
    const file = path.join(h.dir, 'kubelet-config.yaml');
    fs.writeFileSync(
      file,
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: ${setting}\npodLogsDir: ${h.podLogsDir}\n`,
    );
    return file;
  };
  /** Runs one pod and returns its UID once its container runs. */
  const runPod = async (name: string): Promise<string> => {
    h.write(`${name}.yaml`, manifest(name));
    const pod = await waitFor(
      async () => {
        const [p] = await h.pods(name);
        return p?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING) && p;
      },
      { timeoutMs: 60_000, what: `${name} running` },
    );
    return pod.uid;
  };
  return { h, config, runPod };
}

describe('containerd 2.1 (RuntimeConfig), runc SystemdCgroup = false, cgroupDriver: systemd in the file', () => {
  const { h, config, runPod } = useNode('2.1', 'systemd');

  it("takes cgroupfs from the runtime with the kubelet's line, and runs the pod under /kubepods", async () => {
    const agent = h.launch({ configFile: config() });
    const used = await agent.waitForLog(
      (r) => r.msg === 'Using cgroup driver setting received from the CRI runtime',
      'the cgroup driver from the runtime',
      60_000,
    );
    expect(used).toMatchObject({ cgroupDriver: 'cgroupfs', cgroupDriverSetting: 'systemd' });
    const uid = await runPod('from-runtime');
    expect(fs.existsSync(memoryDir(`kubepods/burstable/pod${uid}`))).toBe(true);
    expect(await getFromAgentSocket(h.rootDir, '/metrics')).not.toMatch(/^kubelet_cri_losing_support\{/m);
    expect(agent.records().filter((r) => /cgroup driver mismatch/.test(String(r.msg)))).toEqual([]);
    h.remove('from-runtime.yaml');
    await waitFor(async () => (await h.pods('from-runtime')).length === 0, {
      timeoutMs: 60_000,
      what: 'from-runtime gone',
    });
    await agent.kill('SIGTERM');
  });
});

describe('containerd 1.7 (no RuntimeConfig), cgroupDriver: cgroupfs in the file', () => {
  const { h, config, runPod } = useNode('1.7', 'cgroupfs');

  it("falls back to the setting with the kubelet's line and kubelet_cri_losing_support", async () => {
    const agent = h.launch({ configFile: config() });
    await agent.waitForLog(
      (r) =>
        r.msg ===
        'CRI implementation should be updated to support RuntimeConfig. Falling back to using cgroupDriver from kubelet config.',
      'the fallback to the setting',
      60_000,
    );
    const uid = await runPod('from-setting');
    expect(fs.existsSync(memoryDir(`kubepods/burstable/pod${uid}`))).toBe(true);
    // The kubelet 1.34's word for a runtime without RuntimeConfig: support ends in 1.36.
    expect(await getFromAgentSocket(h.rootDir, '/metrics')).toMatch(LOSING_SUPPORT);
    expect(agent.records().some((r) => r.msg === 'Using cgroup driver setting received from the CRI runtime')).toBe(
      false,
    );
    h.remove('from-setting.yaml');
    await waitFor(async () => (await h.pods('from-setting')).length === 0, {
      timeoutMs: 60_000,
      what: 'from-setting gone',
    });
    await agent.kill('SIGTERM');
  });
});

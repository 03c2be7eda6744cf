// The systemd cgroup driver for real: a systemd (PID 1 of its own namespaces, dev/systemd-node.ts),
// containerd with `SystemdCgroup = true` beside it, and bootlet configured as kubeadm configures
// the kubelet (cgroupDriver: systemd). The pod's slices are made over D-Bus with the pod's limits,
// runc puts the containers' scopes into them, and the pod slice goes with the pod. Against the same
// runtime, bootlet left at cgroupfs: on containerd 1.x (no RuntimeConfig) it says so in one line
// instead of one runc error per pod; on 2.x it takes systemd from RuntimeConfig, as the kubelet does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeAll, afterAll, afterEach, describe, expect, it } from 'vitest';
import { defaultContainerdVersion } from '../../../dev/containerd-versions.js';
import { TEST_IMAGES } from '../../../dev/images.js';
import { startNamespacedSystemd, systemdNodeUnavailable, type NamespacedSystemd } from '../../../dev/systemd-node.js';
import { detectCgroupSubsystems } from '../../../src/cm/cgroup-subsystems.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RunningAgent } from '../../support/agent.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from '../agent/harness.js';

const NODE = 'node-systemd';
/** containerd 2.x answers RuntimeConfig: bootlet then follows the runtime whatever its setting. */
const answersRuntimeConfig = !defaultContainerdVersion().startsWith('1.');
const unavailable = systemdNodeUnavailable();
if (unavailable) console.warn(`skipping the systemd cgroup driver e2e test: ${unavailable}`);

describe.skipIf(unavailable !== undefined)(
  'systemd cgroup driver (real systemd, containerd SystemdCgroup = true)',
  () => {
    let sd: NamespacedSystemd | undefined;
    beforeAll(async () => {
      sd = await startNamespacedSystemd('cm');
    }, 90_000);
    const h = useAgentHarness('systemd', NODE, { extraArgs: ['--v=4'] }, () => ({
      systemdCgroup: true,
      wrap: sd!.enter,
    }));
    afterEach((ctx) => {
      if (ctx.task.result?.state === 'fail' && sd) console.error(`systemd's log (end):\n${sd.log()}`);
    });
    afterAll(async () => {
      await sd?.stop();
    });

    const subsystems = detectCgroupSubsystems();
    let agent: RunningAgent | undefined;
    const configFor = (driver: string) => {
      const file = path.join(h.dir, `kubelet-${driver}.yaml`);
      // As kubeadm writes it (trimmed): the driver, and cgroupsPerQOS / cgroupRoot left to defaults.
      fs.writeFileSync(
        file,
        `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: ${driver}\ncgroupRoot: ""\npodLogsDir: ${h.podLogsDir}\n`,
      );
      return file;
    };
    const manifest = (name: string) => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: default
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    resources:
      requests: {cpu: 100m, memory: 16Mi}
      limits: {cpu: 500m, memory: 64Mi}
`;
    /** A path in a v1 hierarchy (or the v2 tree) of the test systemd's subtree. */
    const hostPath = (controller: string, rel: string) =>
      subsystems.version === 2
        ? path.join(subsystems.mountpoint, sd!.cgroup, rel)
        : path.join(subsystems.mountpoints.get(controller)!, sd!.cgroup, rel);

    afterAll(async () => {
      await agent?.kill('SIGKILL');
    });

    /** ctr reports PIDs of the test systemd's PID namespace; its /proc (seen through its root) has them. */
    const procOf = (nsPid: number) => `/proc/${sd!.pid}/root/proc/${nsPid}`;

    it("runs a Burstable pod in kubepods-burstable-pod<uid>.slice with the pod's limits, and removes the slice with the pod", async () => {
      agent = h.launch({ configFile: configFor('systemd'), wrap: sd!.enter });
      h.write('sliced.yaml', manifest('sliced'));
      const found = await waitFor(
        async () => {
          const [pod] = await h.pods('sliced');
          const c = pod?.containers.find((x) => x.name === 'main' && x.state === ContainerState.CONTAINER_RUNNING);
          return pod && c ? { pod, c } : undefined;
        },
        { timeoutMs: 90_000, what: 'sliced running' },
      );
      const slice = `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${found.pod.uid.replaceAll('-', '_')}.slice`;
      const tasks = await h.cd().ctr(['tasks', 'ls']);
      const pid = Number(
        tasks
          .split('\n')
          .find((l) => l.startsWith(found.c.id))!
          .trim()
          .split(/\s+/)[1],
      );
      const cgroups = fs.readFileSync(`${procOf(pid)}/cgroup`, 'utf8');
      const scope = `${sd!.cgroup}${slice}/cri-containerd-${found.c.id}.scope`;
      if (subsystems.version === 1) {
        expect(cgroups).toMatch(new RegExp(`^\\d+:cpu:${scope.replaceAll('.', '\\.')}$`, 'm'));
        expect(cgroups).toMatch(new RegExp(`^\\d+:memory:${scope.replaceAll('.', '\\.')}$`, 'm'));
        expect(fs.readFileSync(path.join(hostPath('cpu', slice), 'cpu.shares'), 'utf8').trim()).toBe('102');
        expect(fs.readFileSync(path.join(hostPath('cpu', slice), 'cpu.cfs_quota_us'), 'utf8').trim()).toBe('50000');
        expect(fs.readFileSync(path.join(hostPath('memory', slice), 'memory.limit_in_bytes'), 'utf8').trim()).toBe(
          String(64 * 2 ** 20),
        );
        expect(
          fs
            .readFileSync(path.join(hostPath('cpu', '/kubepods.slice/kubepods-besteffort.slice'), 'cpu.shares'), 'utf8')
            .trim(),
        ).toBe('2');
      } else {
        expect(cgroups).toContain(`0::${scope}`);
        expect(fs.readFileSync(path.join(hostPath('', slice), 'memory.max'), 'utf8').trim()).toBe(String(64 * 2 ** 20));
      }
      await agent.waitForLog(
        (r) => r.msg === 'Pod cgroups under QoS classes' && r.driver === 'systemd',
        'cm started with systemd',
      );

      h.remove('sliced.yaml');
      await waitFor(async () => ((await h.pods('sliced')).length === 0 ? true : undefined), {
        timeoutMs: 60_000,
        what: 'sliced gone',
      });
      await waitFor(
        () => (!fs.existsSync(hostPath('memory', slice)) && !fs.existsSync(hostPath('cpu', slice)) ? true : undefined),
        {
          timeoutMs: 30_000,
          what: 'pod slice removed',
        },
      );
      await agent.kill('SIGTERM');
    });

    it.runIf(answersRuntimeConfig)(
      "left at cgroupfs against this runtime: takes systemd from RuntimeConfig with the kubelet's line, pods run",
      async () => {
        await agent?.kill('SIGKILL');
        agent = h.launch({ configFile: configFor('cgroupfs'), wrap: sd!.enter });
        const used = await agent.waitForLog(
          (r) => r.msg === 'Using cgroup driver setting received from the CRI runtime',
          'the cgroup driver from the runtime',
          60_000,
        );
        expect(used).toMatchObject({ cgroupDriver: 'systemd', cgroupDriverSetting: 'cgroupfs' });
        h.write('a.yaml', manifest('followed'));
        const [pod] = await waitFor(
          async () => {
            const pods = await h.pods('followed');
            return pods[0]?.containers.some((c) => c.state === ContainerState.CONTAINER_RUNNING) && pods;
          },
          { timeoutMs: 60_000, what: 'followed running' },
        );
        const slice = `kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${pod!.uid.replace(/-/g, '_')}.slice`;
        expect(fs.existsSync(hostPath('memory', slice))).toBe(true);
        expect(agent.records().filter((r) => /cgroup driver mismatch/.test(String(r.msg)))).toEqual([]);
        h.remove('a.yaml');
        await waitFor(async () => ((await h.pods('followed')).length === 0 ? true : undefined), {
          timeoutMs: 60_000,
          what: 'followed gone',
        });
      },
    );

    it.skipIf(answersRuntimeConfig)(
      'left at cgroupfs against this runtime: one line naming the setting, no runc error per pod',
      async () => {
        await agent?.kill('SIGKILL');
        agent = h.launch({ configFile: configFor('cgroupfs'), wrap: sd!.enter });
        h.write('a.yaml', manifest('mismatch-a'));
        h.write('b.yaml', manifest('mismatch-b'));
        const failed = (name: string) => (r: Record<string, unknown>) =>
          r.msg === 'Error syncing pod, will retry' && String(r.pod).includes(name);
        await agent.waitForLog(failed('mismatch-a'), 'mismatch-a failed', 60_000);
        await agent.waitForLog(failed('mismatch-b'), 'mismatch-b failed', 60_000);
        const records = agent.records();
        const mismatch = records.filter((r) =>
          /cgroup driver mismatch: the container runtime uses the systemd driver/.test(String(r.msg)),
        );
        expect(mismatch).toHaveLength(1);
        // Known from containerd's config before the first pod failed.
        expect(records.indexOf(mismatch[0]!)).toBeLessThan(records.findIndex(failed('mismatch')));
        expect(String(mismatch[0]!.msg)).toMatch(
          /set cgroupDriver: systemd in the KubeletConfiguration \(or --cgroup-driver=systemd\)/,
        );
        const perPod = agent.records().filter(failed('mismatch'));
        expect(
          perPod.every((r) =>
            /: cgroup driver mismatch: the runtime uses systemd, bootlet cgroupfs; set cgroupDriver: systemd/.test(
              String(r.err),
            ),
          ),
        ).toBe(true);
        expect(agent.lines.some((l) => l.includes('expected cgroupsPath'))).toBe(false);
        h.remove('a.yaml');
        h.remove('b.yaml');
      },
    );
  },
);

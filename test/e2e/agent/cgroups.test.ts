// Pod cgroups with the cgroupfs driver (the CI containerd's): the container's process sits under
// /kubepods/burstable/pod<uid>/, the pod cgroup carries the pod's limits, a restarted agent keeps
// both, and the pod cgroup goes when the pod does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { detectCgroupSubsystems } from '../../../src/cm/cgroup-subsystems.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RunningAgent } from '../../support/agent.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-cgroups';
const h = useAgentHarness('cgroups', NODE, { extraArgs: ['--v=4'] });
const subsystems = detectCgroupSubsystems();
let agent: RunningAgent | undefined;
let podCgroup = '';

const MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: limited
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

/** The pod cgroup's directory in one hierarchy (v1: cpu, memory, ...; v2: the unified tree). */
function dir(controller: string, rel: string): string {
  if (subsystems.version === 2) return path.join(subsystems.mountpoint, rel);
  return path.join(subsystems.mountpoints.get(controller)!, rel);
}

function read(controller: string, rel: string, file: string): string {
  return fs.readFileSync(path.join(dir(controller, rel), file), 'utf8').trim();
}

/** The cgroup of `pid` in a v1 hierarchy (or the v2 one), as /proc/<pid>/cgroup shows it. */
function cgroupOf(pid: number, controller: string): string | undefined {
  for (const line of fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n')) {
    const [, controllers, p] = line.split(':');
    if (p === undefined) continue;
    if (subsystems.version === 2 ? controllers === '' : controllers!.split(',').includes(controller)) return p;
  }
  return undefined;
}

async function running() {
  const [pod] = await h.pods('limited');
  const c = pod?.containers.find((x) => x.name === 'main' && x.state === ContainerState.CONTAINER_RUNNING);
  return pod && c ? { pod, container: c } : undefined;
}

async function taskPid(containerId: string): Promise<number> {
  const out = await h.cd().ctr(['tasks', 'ls']);
  const line = out.split('\n').find((l) => l.startsWith(containerId));
  if (!line) throw new Error(`no task ${containerId} in:\n${out}`);
  return Number(line.trim().split(/\s+/)[1]);
}

afterAll(() => {
  // Only if a test failed half-way: the agent removes the pod cgroup itself.
  if (!podCgroup) return;
  const dirs =
    subsystems.version === 2
      ? [dir('', podCgroup)]
      : [...subsystems.mountpoints.values()].map((mp) => path.join(mp, podCgroup));
  for (const d of dirs) {
    try {
      for (const child of fs.readdirSync(d, { withFileTypes: true }))
        if (child.isDirectory()) fs.rmdirSync(path.join(d, child.name));
      fs.rmdirSync(d);
    } catch {
      /* gone, or still busy */
    }
  }
});

describe('pod cgroups (cgroupfs driver)', () => {
  it("puts a Burstable pod's containers under /kubepods/burstable/pod<uid> with the pod's limits", async () => {
    agent = h.launch();
    h.write('limited.yaml', MANIFEST);
    const found = await waitFor(running, { timeoutMs: 90_000, what: 'limited running' });
    const uid = found.pod.uid;
    podCgroup = `/kubepods/burstable/pod${uid}`;
    const pid = await taskPid(found.container.id);
    for (const controller of ['cpu', 'memory']) {
      expect(cgroupOf(pid, controller)).toBe(`${podCgroup}/${found.container.id}`);
    }
    if (subsystems.version === 1) {
      expect(read('cpu', podCgroup, 'cpu.shares')).toBe('102');
      expect(read('cpu', podCgroup, 'cpu.cfs_period_us')).toBe('100000');
      expect(read('cpu', podCgroup, 'cpu.cfs_quota_us')).toBe('50000');
      expect(read('memory', podCgroup, 'memory.limit_in_bytes')).toBe(String(64 * 2 ** 20));
      expect(read('cpu', '/kubepods/besteffort', 'cpu.shares')).toBe('2');
      // The sandbox (pause) is in the pod cgroup too.
      const children = fs.readdirSync(dir('memory', podCgroup), { withFileTypes: true }).filter((e) => e.isDirectory());
      expect(children).toHaveLength(2);
    } else {
      expect(read('', podCgroup, 'cpu.weight')).toBe('4');
      expect(read('', podCgroup, 'cpu.max')).toBe('50000 100000');
      expect(read('', podCgroup, 'memory.max')).toBe(String(64 * 2 ** 20));
    }
    await agent.waitForLog((r) => r.msg === 'Pod cgroups under QoS classes' && r.driver === 'cgroupfs', 'cm started');
  });

  it('a restarted agent finds the pod cgroup and keeps it, and the container in it', async () => {
    const before = (await running())!;
    await agent!.kill('SIGKILL');
    agent = h.launch();
    const key = `default/limited-${NODE}`;
    await agent.waitForLog((r) => r.msg === 'Pod synced' && r.pod === key, 'limited synced after restart', 60_000);
    const after = (await running())!;
    expect(after.container.id).toBe(before.container.id);
    expect(cgroupOf(await taskPid(after.container.id), 'memory')).toBe(`${podCgroup}/${after.container.id}`);
    if (subsystems.version === 1) expect(read('memory', podCgroup, 'memory.limit_in_bytes')).toBe(String(64 * 2 ** 20));
    expect(agent.records().some((r) => r.msg === 'Created pod sandbox')).toBe(false);
  });

  it('removes the pod cgroup, in every hierarchy, when the pod is removed', async () => {
    h.remove('limited.yaml');
    await waitFor(async () => ((await h.pods('limited')).length === 0 ? true : undefined), {
      timeoutMs: 60_000,
      what: 'limited gone from the runtime',
    });
    const hierarchies = subsystems.version === 2 ? [''] : [...subsystems.mountpoints.keys()];
    await waitFor(() => (hierarchies.every((c) => !fs.existsSync(dir(c, podCgroup))) ? true : undefined), {
      timeoutMs: 30_000,
      what: 'pod cgroup removed',
    });
    podCgroup = '';
  });
});

// The isolation fields honoured end to end, through the packaged agent on containerd 2.1 running
// Debian sid's runc 1.3 (dev/sid-runc.ts: idmapped mounts, so containerd lists the default handler
// with user namespaces and recursive read-only mounts): a `hostUsers: false` pod runs in a user
// namespace of its own 65536-ID block (its uid_map, read on the host and inside, against the pod's
// userns file), two pods never share one, an agent restart keeps them; the default masked paths are
// masked, and not with `procMount: Unmasked`; a recursive read-only mount leaves no submount
// writable where a plain read-only one does.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { createNetns, type TestNetns } from '../../../dev/netns.js';
import { sidRunc } from '../../../dev/sid-runc.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RunningAgent } from '../../support/agent.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-userns';
const BLOCK = 65536;
let ns: TestNetns | undefined;
let runc = '';

// Before the harness's hooks: the network namespace and the runc exist before its containerd starts.
beforeAll(async () => {
  runc = await sidRunc();
  ns = await createNetns();
}, 600_000);
afterAll(async () => {
  await ns?.remove();
});

const h = useAgentHarness('isolation-userns', NODE, { extraArgs: ['--v=2'] }, () => ({
  version: '2.1',
  runtimeBinary: runc,
  podNetwork: { netnsPath: ns!.path, subnet: '10.244.9.0/24' },
}));
let agent: RunningAgent;
const submountHost = (): string => path.join(h.dir, 'host-volume');

const SLEEP = `command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]`;
const userns = (name: string, procMount = 'Default'): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: kube-system}
spec:
  hostUsers: false
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    ${SLEEP}
    securityContext: {procMount: ${procMount}}
`;
const plain = `apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: kube-system}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    ${SLEEP}
`;
const rro = (): string => `apiVersion: v1
kind: Pod
metadata: {name: rro, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  volumes:
  - {name: host, hostPath: {path: ${submountHost()}, type: Directory}}
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    ${SLEEP}
    volumeMounts:
    - {name: host, mountPath: /rro, readOnly: true, recursiveReadOnly: Enabled}
    - {name: host, mountPath: /ro, readOnly: true}
`;

interface Running {
  readonly uid: string;
  readonly containerId: string;
}

async function running(name: string): Promise<Running | undefined> {
  for (const p of await h.pods(name)) {
    const c = p.containers.find((x) => x.name === 'main' && x.state === ContainerState.CONTAINER_RUNNING);
    if (c) return { uid: p.uid, containerId: c.id };
  }
  return undefined;
}
const runningSoon = (name: string): Promise<Running> =>
  waitFor(() => running(name), { timeoutMs: 120_000, what: `${name} running` });

async function exec(id: string, cmd: string[]): Promise<{ code: number; out: string }> {
  const r = await h.cri().runtime.execSync(id, cmd, 10);
  return { code: r.exitCode, out: Buffer.from(r.stdout).toString() + Buffer.from(r.stderr).toString() };
}

/** The container's main process on the host (ctr tasks ls: TASK PID STATUS). */
async function hostPid(containerId: string): Promise<number> {
  const line = (await h.cd().ctr(['tasks', 'ls'])).split('\n').find((l) => l.startsWith(containerId));
  if (!line) throw new Error(`no task ${containerId}`);
  return Number(line.split(/\s+/)[1]);
}

const mapOf = (text: string): number[] => text.trim().split(/\s+/).map(Number);
const hostMap = async (id: string, file: 'uid_map' | 'gid_map' = 'uid_map'): Promise<number[]> =>
  mapOf(fs.readFileSync(`/proc/${await hostPid(id)}/${file}`, 'utf8'));

/** The block the agent wrote for the pod, in the kubelet's userns file. */
function blockOf(uid: string): number {
  const file = JSON.parse(fs.readFileSync(path.join(h.rootDir, 'pods', uid, 'userns'), 'utf8')) as {
    uidMappings: { hostId: number; containerId: number; length: number }[];
    gidMappings: unknown;
  };
  expect(file.gidMappings).toEqual(file.uidMappings);
  expect(file.uidMappings).toEqual([{ hostId: file.uidMappings[0]!.hostId, containerId: 0, length: BLOCK }]);
  return file.uidMappings[0]!.hostId;
}

/** The mounts below /proc in the container (a masked or read-only path is a mount of its own there). */
async function procMounts(containerId: string): Promise<string[]> {
  const mountinfo = (await exec(containerId, ['cat', '/proc/self/mountinfo'])).out;
  return mountinfo
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith('/proc/'));
}

beforeAll(() => {
  fs.mkdirSync(path.join(submountHost(), 'sub'), { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'rro-sub', path.join(submountHost(), 'sub')]);
  agent = h.launch();
  h.write('userns-a.yaml', userns('userns-a'));
  h.write('userns-b.yaml', userns('userns-b', 'Unmasked'));
  h.write('plain.yaml', plain);
  h.write('rro.yaml', rro());
});
afterAll(() => {
  execFileSync('umount', [path.join(submountHost(), 'sub')]);
});

describe('isolation honoured on a runtime that supports it', () => {
  it('the runtime lists the default handler with user namespaces and recursive read-only mounts', async () => {
    const { runtimeHandlers } = await h.cri().runtime.statusWithHandlers();
    expect(runtimeHandlers.find((x) => x.name === '')?.features).toEqual({
      recursiveReadOnlyMounts: true,
      userNamespaces: true,
    });
  });

  it("hostUsers: false runs the pod in its own 65536-ID block, the one in the pod's userns file", async () => {
    const a = await runningSoon('userns-a');
    const b = await runningSoon('userns-b');
    const blockA = blockOf(a.uid);
    const blockB = blockOf(b.uid);
    expect(blockA).not.toBe(blockB);
    for (const [pod, block] of [
      [a, blockA],
      [b, blockB],
    ] as const) {
      expect(block % BLOCK).toBe(0);
      expect(block).toBeGreaterThanOrEqual(BLOCK);
      expect(await hostMap(pod.containerId)).toEqual([0, block, BLOCK]);
      expect(await hostMap(pod.containerId, 'gid_map')).toEqual([0, block, BLOCK]);
      expect(mapOf((await exec(pod.containerId, ['cat', '/proc/self/uid_map'])).out)).toEqual([0, block, BLOCK]);
    }
    // Root in the pod is not root on the node.
    const status = fs.readFileSync(`/proc/${await hostPid(a.containerId)}/status`, 'utf8');
    expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(blockA));
    // A pod that asks for nothing stays in the node's user namespace.
    const p = await runningSoon('plain');
    expect(await hostMap(p.containerId)).toEqual([0, 0, 4294967295]);
  });

  it('masks the default paths, and none with procMount: Unmasked', async () => {
    const a = await runningSoon('userns-a');
    const b = await runningSoon('userns-b');
    // Masked (those of the kubelet's list this kernel has) and read-only (/proc/sys, /proc/bus, ...).
    expect(await procMounts(a.containerId)).toEqual(
      expect.arrayContaining(['/proc/keys', '/proc/timer_list', '/proc/acpi', '/proc/sys', '/proc/bus']),
    );
    expect(await procMounts(b.containerId)).toEqual([]);
    // A masked file is /dev/null bound over it; the Unmasked pod sees the kernel's own.
    const kind = ['stat', '-c', '%F', '/proc/keys'];
    expect((await exec(a.containerId, kind)).out.trim()).toBe('character special file');
    expect((await exec(b.containerId, kind)).out.trim()).toMatch(/regular/);
  });

  it('a recursive read-only mount leaves no submount writable; a plain read-only one does', async () => {
    const r = await runningSoon('rro');
    const viaRro = await exec(r.containerId, ['touch', '/rro/sub/through-rro']);
    expect(viaRro.code).not.toBe(0);
    expect(viaRro.out).toContain('Read-only file system');
    expect(fs.existsSync(path.join(submountHost(), 'sub', 'through-rro'))).toBe(false);
    const viaRo = await exec(r.containerId, ['touch', '/ro/sub/through-ro']);
    expect(viaRo.code).toBe(0);
    expect(fs.existsSync(path.join(submountHost(), 'sub', 'through-ro'))).toBe(true);
    // The top of both is read-only.
    expect((await exec(r.containerId, ['touch', '/ro/top'])).out).toContain('Read-only file system');
  });

  it('an agent restart reads every block back: running pods keep theirs, a new pod gets another', async () => {
    const a = await runningSoon('userns-a');
    const b = await runningSoon('userns-b');
    const before = [blockOf(a.uid), blockOf(b.uid)];
    await agent.kill('SIGKILL');
    agent = h.launch();
    h.write('userns-c.yaml', userns('userns-c'));
    const c = await runningSoon('userns-c');
    expect(before).not.toContain(blockOf(c.uid));
    expect([blockOf(a.uid), blockOf(b.uid)]).toEqual(before);
    // Nothing restarted: the same containers run, in the same blocks.
    expect((await running('userns-a'))?.containerId).toBe(a.containerId);
    expect((await running('userns-b'))?.containerId).toBe(b.containerId);
    expect(await hostMap(c.containerId)).toEqual([0, blockOf(c.uid), BLOCK]);
  });

  it("the pod's directory, with its userns file, goes with the pod", async () => {
    const a = await runningSoon('userns-a');
    expect(fs.existsSync(path.join(h.rootDir, 'pods', a.uid, 'userns'))).toBe(true);
    h.remove('userns-a.yaml');
    await waitFor(async () => ((await h.pods('userns-a')).length === 0 ? true : undefined), {
      timeoutMs: 90_000,
      what: 'userns-a removed',
    });
    await waitFor(() => (fs.existsSync(path.join(h.rootDir, 'pods', a.uid)) ? undefined : true), {
      timeoutMs: 60_000,
      what: "userns-a's directory removed",
    });
  });
});

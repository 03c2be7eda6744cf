// The isolation fields of static pods on a standalone agent over the machine's containerd 1.6 with
// runc 1.1.5, a runtime that lists no handlers and so no features: each field the agent cannot have
// honoured is refused in the kubelet's words and never run without, while the pods beside keep
// running. hostUsers: false and a RuntimeClass (no API server to read it from) fail the sandbox;
// recursiveReadOnly: Enabled fails the container (CreateContainerConfigError), IfPossible runs
// read-only but not recursively; an AppArmor profile is refused at admission (no AppArmor on this
// host). seLinuxOptions reach the runtime as the kubelet sends them.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ContainerStatus, Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RunningAgent } from '../../support/agent.js';
import { freePort } from '../../support/ports.js';
import { readOnlyPods } from '../../support/read-only-pods.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-iso-sa';
const h = useAgentHarness('isolation-standalone', NODE, {}, () => ({ version: '1.6' }));
let agent: RunningAgent;
let readOnlyPort: number;
const hostDir = (): string => path.join(h.dir, 'host-volume');

const pod = (name: string, extra: string): string => busyboxPod(name, SLEEP_LOOP, extra);
const volume = (mode: string): string =>
  `    volumeMounts: [{name: host, mountPath: /data, readOnly: true, recursiveReadOnly: ${mode}}]
  volumes: [{name: host, hostPath: {path: ${hostDir()}, type: Directory}}]
`;

async function apiView(name: string): Promise<Pod | undefined> {
  return (await readOnlyPods(readOnlyPort)).items.find((p) => p.metadata?.name === `${name}-${NODE}`);
}

async function containerStatus(name: string): Promise<ContainerStatus | undefined> {
  return (await apiView(name))?.status?.containerStatuses?.find((c) => c.name === 'main');
}

async function runningId(name: string): Promise<string | undefined> {
  for (const p of await h.pods(name)) {
    const c = p.containers.find((x) => x.name === 'main' && x.state === ContainerState.CONTAINER_RUNNING);
    if (c) return c.id;
  }
  return undefined;
}

/** The sync error the agent logged about the pod, and the Warning event beside it (standalone: a log line). */
async function sandboxRefusal(name: string): Promise<{ err: unknown; event: unknown }> {
  const pod = `kube-system/${name}-${NODE}`;
  const line = await agent.waitForLog(
    (r) => r.msg === 'Error syncing pod, will retry' && r.pod === pod,
    `${name}: the sync error`,
    90_000,
  );
  const event = await agent.waitForLog(
    (r) => r.msg === 'Event' && r.pod === pod && r.reason === 'FailedCreatePodSandBox',
    `${name}: FailedCreatePodSandBox`,
    30_000,
  );
  return { err: line.err, event: event.message };
}

beforeAll(async () => {
  readOnlyPort = await freePort();
  fs.mkdirSync(path.join(hostDir(), 'sub'), { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'iso-sub', path.join(hostDir(), 'sub')]);
  agent = h.launch({ readOnlyPort, extraArgs: ['--v=2'] });
  h.write('marker.yaml', pod('marker', ''));
  h.write('userns.yaml', busyboxPod('userns', SLEEP_LOOP).replace('  hostNetwork: true\n', '  hostUsers: false\n'));
  h.write('rc.yaml', pod('rc', '  runtimeClassName: gvisor\n'));
  h.write('rro.yaml', pod('rro', volume('Enabled')));
  h.write('rro-if-possible.yaml', pod('rro-if-possible', volume('IfPossible')));
  h.write(
    'apparmor.yaml',
    pod('apparmor', '    securityContext: {appArmorProfile: {type: Localhost, localhostProfile: deny-write}}\n'),
  );
  h.write(
    'apparmor-annotation.yaml',
    busyboxPod('apparmor-annotation', SLEEP_LOOP).replace(
      'namespace: kube-system}',
      'namespace: kube-system, annotations: {container.apparmor.security.beta.kubernetes.io/main: runtime/default}}',
    ),
  );
  h.write(
    'selinux.yaml',
    pod(
      'selinux',
      '    securityContext: {seLinuxOptions: {user: system_u, role: system_r, type: spc_t, level: "s0:c1,c2"}}\n',
    ),
  );
  await waitFor(() => runningId('marker'), { timeoutMs: 90_000, what: 'marker running' });
});
afterAll(() => {
  execFileSync('umount', [path.join(hostDir(), 'sub')]);
});

describe('isolation fields a runtime without features cannot honour, on a standalone agent', () => {
  it("hostUsers: false: the sandbox fails with the kubelet's message; the pod stays Pending, nothing runs", async () => {
    const why =
      'can\'t set `spec.hostUsers: false`, runtime does not support user namespaces: the handler "" is not known';
    expect(await sandboxRefusal('userns')).toEqual({ err: why, event: `Failed to create pod sandbox: ${why}` });
    expect((await apiView('userns'))?.status?.phase).toBe('Pending');
    expect(await h.pods('userns')).toEqual([]);
  });

  it('a RuntimeClass with no API server to read it from: not found, never the default handler', async () => {
    const why = 'runtimeclass.node.k8s.io "gvisor" not found';
    expect(await sandboxRefusal('rc')).toEqual({ err: why, event: `Failed to create pod sandbox: ${why}` });
    expect(await h.pods('rc')).toEqual([]);
  });

  it('recursiveReadOnly: Enabled fails the container (CreateContainerConfigError); IfPossible is read-only, not recursive', async () => {
    const waiting = await waitFor(
      async () => {
        const s = await containerStatus('rro');
        return s?.state?.waiting?.reason === 'CreateContainerConfigError' ? s.state.waiting : undefined;
      },
      { timeoutMs: 90_000, what: 'rro waiting with CreateContainerConfigError' },
    );
    expect(waiting.message).toBe(
      'failed to resolve recursive read-only mode: volume "host" requested recursive read-only mode, but it is not supported by the runtime',
    );
    expect((await h.pods('rro')).flatMap((p) => p.containers)).toEqual([]);
    const id = await waitFor(() => runningId('rro-if-possible'), { timeoutMs: 90_000, what: 'rro-if-possible' });
    const exec = async (cmd: string[]) => {
      const r = await h.cri().runtime.execSync(id, cmd, 10);
      return { code: r.exitCode, out: Buffer.from(r.stdout).toString() + Buffer.from(r.stderr).toString() };
    };
    expect((await exec(['touch', '/data/top'])).out).toContain('Read-only file system');
    expect((await exec(['touch', '/data/sub/written'])).code).toBe(0);
    expect(fs.existsSync(path.join(hostDir(), 'sub', 'written'))).toBe(true);
  });

  it('an AppArmor profile, by field or annotation: Failed, reason AppArmor, at admission', async () => {
    for (const name of ['apparmor', 'apparmor-annotation']) {
      const status = await waitFor(
        async () => {
          const s = (await apiView(name))?.status;
          return s?.phase === 'Failed' ? s : undefined;
        },
        { timeoutMs: 60_000, what: `${name} Failed` },
      );
      expect(status).toMatchObject({
        reason: 'AppArmor',
        message: 'Pod was rejected: Cannot enforce AppArmor: AppArmor is not enabled on the host',
      });
      expect(
        agent.records().some((r) => r.msg === 'Pod refused admission' && r.pod === `kube-system/${name}-${NODE}`),
      ).toBe(true);
      expect(await h.pods(name)).toEqual([]);
    }
  });

  it('seLinuxOptions reach the runtime with the container (the CRI config containerd keeps)', async () => {
    const id = await waitFor(() => runningId('selinux'), { timeoutMs: 90_000, what: 'selinux running' });
    // containerd keeps the CreateContainer request's config in the container's CRI metadata.
    const info = JSON.parse(await h.cd().ctr(['containers', 'info', id])) as {
      Extensions: Record<string, { value: string }>;
    };
    const metadata = JSON.parse(
      Buffer.from(info.Extensions['io.cri-containerd.container.metadata']!.value, 'base64').toString(),
    ) as { Metadata: { Config: { linux: { security_context: { selinux_options?: unknown } } } } };
    expect(metadata.Metadata.Config.linux.security_context.selinux_options).toEqual({
      user: 'system_u',
      role: 'system_r',
      type: 'spc_t',
      level: 's0:c1,c2',
    });
  });

  it('the pods beside run on: the marker was never disturbed', async () => {
    expect(await runningId('marker')).toBeDefined();
    expect(agent.proc.exitCode).toBeNull();
  });
});

// Safe subPaths through the packaged agent and a real containerd: a symlink a container leaves in
// its emptyDir never turns a subPath into a bind of a host directory (CVE-2017-1002101), and
// ordinary subPaths (a directory, a file, one created on demand) are bound at volume-subpaths and
// unmounted when the pod is removed, before its directory goes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import type { RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import type { RunningAgent } from '../../support/agent.js';
import { mountsUnder, unmountAllUnder } from '../../support/mounts.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-v';
const h = useAgentHarness('volumes', NODE, { extraArgs: ['--v=3'] });
// Registered after the harness, so it runs before containerd stops: no bind outlives a red test.
afterAll(() => unmountAllUnder(h.rootDir));
const outside = path.join(h.dir, 'outside');
const shared = path.join(h.dir, 'shared');
let agent: RunningAgent;

const sh = (script: string) => JSON.stringify(['sh', '-c', script]);

async function pod(name: string): Promise<RuntimePod | undefined> {
  return (await h.pods(name))[0];
}

const startFailureOf = (name: string, container: string) => (r: Record<string, unknown>) =>
  r.msg === 'Failed to start container' && r.pod === `default/${name}-${NODE}` && r.container === container;

beforeAll(() => {
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(outside, 'precious'), 'host data');
  fs.mkdirSync(shared, { recursive: true });
  fs.mkdirSync(h.rootDir, { recursive: true });
  agent = h.launch();
});

describe('subPath and symlinks in an emptyDir', () => {
  it('refuses a subPath that a container turned into a symlink to /etc, and creates nothing outside the volume', async () => {
    h.write(
      'escape.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: escape}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  initContainers:
  - name: plant
    image: ${TEST_IMAGES.busybox}
    command: ${sh(`ln -s ${outside} /data/escape2`)}
    volumeMounts: [{name: data, mountPath: /data}]
  containers:
  # Swaps the directory the victim's subPath names for a symlink to the host's /etc once the
  # victim has used it, then stays.
  - name: attacker
    image: ${TEST_IMAGES.busybox}
    command: ${sh("until [ -e /data/escape/was-here ]; do sleep 0.1; done; rm -rf /data/escape; ln -s /etc /data/escape; trap 'exit 0' TERM; while true; do sleep 1; done")}
    volumeMounts: [{name: data, mountPath: /data}]
  # Marks its (then empty) subPath and exits, to be restarted onto whatever escape is by then.
  - name: victim
    image: ${TEST_IMAGES.busybox}
    command: ${sh('if [ -z "$(ls -A /mnt)" ]; then touch /mnt/was-here; fi; sleep 1; exit 1')}
    volumeMounts: [{name: data, mountPath: /mnt, subPath: escape}]
  - name: maker
    image: ${TEST_IMAGES.busybox}
    command: ${sh("trap 'exit 0' TERM; while true; do sleep 1; done")}
    volumeMounts: [{name: data, mountPath: /mnt, subPath: escape2/x}]
  volumes:
  - {name: data, emptyDir: {}}
`,
    );
    const maker = await agent.waitForLog(startFailureOf('escape', 'maker'), 'maker refused', 60_000);
    expect(maker.reason).toBe('CreateContainerConfigError');
    expect(maker.err).toBe(
      'failed to prepare subPath for volumeMount "data" of container "maker": subPath "escape2/x" resolves outside the volume',
    );
    expect(fs.readdirSync(outside)).toEqual(['precious']);

    // The victim ran once on its own directory; its restart is refused.
    const victim = await agent.waitForLog(startFailureOf('escape', 'victim'), 'victim restart refused', 90_000);
    expect(victim.reason).toBe('CreateContainerConfigError');
    expect(victim.err).toBe(
      'failed to prepare subPath for volumeMount "data" of container "victim": subPath "escape" resolves outside the volume',
    );
    const p = (await pod('escape'))!;
    const victims = p.containers.filter((c) => c.name === 'victim');
    expect(victims).toHaveLength(1);
    expect(victims[0]!.meta.restartCount).toBe(0);
    expect(p.containers.some((c) => c.name === 'maker')).toBe(false);
    expect(p.containers.find((c) => c.name === 'attacker')?.state).toBe(ContainerState.CONTAINER_RUNNING);
    // The victim's one bind is of its own old directory, never of /etc.
    const binds = mountsUnder(path.join(h.rootDir, 'pods', p.uid));
    expect(binds.map((b) => path.relative(h.rootDir, b.mountPoint))).toEqual([
      `pods/${p.uid}/volume-subpaths/data/victim/0`,
    ]);
    expect(binds[0]!.root).not.toMatch(/^\/etc\b/);
    expect(fs.existsSync('/etc/was-here')).toBe(false);

    h.remove('escape.yaml');
    await waitFor(async () => (await pod('escape')) === undefined, { timeoutMs: 60_000, what: 'escape pod removed' });
    await waitFor(() => !fs.existsSync(path.join(h.rootDir, 'pods', p.uid)), {
      timeoutMs: 30_000,
      what: 'escape pod directory removed',
    });
    expect(mountsUnder(h.rootDir)).toEqual([]);
    expect(fs.readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('host data');
    expect(fs.existsSync('/etc/hostname') || fs.existsSync('/etc/passwd')).toBe(true);
  });

  it('binds a directory, a file and a created subPath, and unmounts them before removing the pod directory', async () => {
    h.write(
      'subpaths.yaml',
      `apiVersion: v1
kind: Pod
metadata: {name: subpaths}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  initContainers:
  - name: prep
    image: ${TEST_IMAGES.busybox}
    command: ${sh('mkdir -p /data/conf && echo cfg > /data/conf/a && echo filedata > /data/single')}
    volumeMounts: [{name: data, mountPath: /data}]
  containers:
  - name: app
    image: ${TEST_IMAGES.busybox}
    command: ${sh("cat /conf/a > /out/conf; cat /single > /out/single; touch /created/marker; trap 'exit 0' TERM; while true; do sleep 1; done")}
    volumeMounts:
    - {name: data, mountPath: /conf, subPath: conf}
    - {name: data, mountPath: /single, subPath: single}
    - {name: data, mountPath: /created, subPath: new/deeper}
    - {name: out, mountPath: /out}
  volumes:
  - {name: data, emptyDir: {}}
  - {name: out, hostPath: {path: ${shared}, type: Directory}}
`,
    );
    const p = await waitFor(
      async () => {
        const p = await pod('subpaths');
        return p?.containers.some((c) => c.name === 'app' && c.state === ContainerState.CONTAINER_RUNNING) &&
          fs.existsSync(path.join(shared, 'single'))
          ? p
          : undefined;
      },
      { timeoutMs: 60_000, what: 'subpaths app running and written its output' },
    );
    await waitFor(() => fs.readFileSync(path.join(shared, 'single'), 'utf8') === 'filedata\n', {
      timeoutMs: 10_000,
      what: 'single copied',
    });
    expect(fs.readFileSync(path.join(shared, 'conf'), 'utf8')).toBe('cfg\n');
    const podDir = path.join(h.rootDir, 'pods', p.uid);
    const emptyDir = path.join(podDir, 'volumes', 'kubernetes.io~empty-dir', 'data');
    await waitFor(() => fs.existsSync(path.join(emptyDir, 'new', 'deeper', 'marker')), {
      timeoutMs: 10_000,
      what: 'marker in the created subPath',
    });
    const binds = ['volume-subpaths/data/app/0', 'volume-subpaths/data/app/1', 'volume-subpaths/data/app/2'];
    expect(
      mountsUnder(podDir)
        .map((m) => path.relative(podDir, m.mountPoint))
        .sort(),
    ).toEqual(binds);

    // A restarted container gets the binds it had, not a second stack of them.
    const app = p.containers.find((c) => c.name === 'app')!;
    await h.cri().runtime.stopContainer(app.id, 0);
    await waitFor(
      async () =>
        (await pod('subpaths'))?.containers.some(
          (c) => c.name === 'app' && c.meta.restartCount === 1 && c.state === ContainerState.CONTAINER_RUNNING,
        ),
      {
        timeoutMs: 60_000,
        what: 'app restarted',
      },
    );
    expect(
      mountsUnder(podDir)
        .map((m) => path.relative(podDir, m.mountPoint))
        .sort(),
    ).toEqual(binds);

    h.remove('subpaths.yaml');
    await waitFor(async () => (await pod('subpaths')) === undefined, {
      timeoutMs: 60_000,
      what: 'subpaths pod removed',
    });
    await waitFor(() => !fs.existsSync(podDir), { timeoutMs: 30_000, what: 'subpaths pod directory removed' });
    expect(mountsUnder(h.rootDir)).toEqual([]);
  });
});

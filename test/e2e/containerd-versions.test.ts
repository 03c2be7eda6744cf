// Every containerd the tests can run (the machine's 1.6, trixie's 1.7, sid's 2.1) starts privately
// from its own config (version 2 for 1.x, 3 for 2.x), takes the test images and runs a pod through
// the CRI with bookworm's runc, and leaves nothing behind.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../../dev/containerd.js';
import { CONTAINERD_VERSIONS, MACHINE_RUNC, type ContainerdVersion } from '../../dev/containerd-versions.js';
import { buildTestImages, importTestImages, TEST_IMAGES } from '../../dev/images.js';
import { mountsUnder } from '../../dev/mounts.js';
import { connectRuntime, type RuntimeConnection } from '../../src/cri/cri-client.js';
import { ContainerState, NamespaceMode, PodSandboxState, type NamespaceOption } from '../../src/cri/cri-types.js';
import { useTmpDir } from '../support/tmp.js';
import { processesNaming } from '../support/processes-naming.js';
import { waitFor } from '../support/wait.js';

const tmp = useTmpDir('containerd-versions');
const hostNetwork: NamespaceOption = {
  network: NamespaceMode.NODE,
  pid: NamespaceMode.CONTAINER,
  ipc: NamespaceMode.POD,
};

beforeAll(async () => {
  await cleanupStaleContainerds();
  await buildTestImages();
});

describe.each(CONTAINERD_VERSIONS)('containerd %s', (version: ContainerdVersion) => {
  let cd: PrivateContainerd | undefined;
  let cri: RuntimeConnection | undefined;

  beforeAll(async () => {
    cd = await startContainerd({ name: `versions-${version}`, version });
    await importTestImages(cd);
    cri = await connectRuntime(cd.endpoint, { connectTimeoutMs: 30_000 });
  });

  afterAll(async () => {
    cri?.runtime.close();
    await cd?.stop();
  });

  it('is the version asked for, from a config of its own version, with the machine runc', () => {
    const config = fs.readFileSync(path.join(cd!.dir, 'config.toml'), 'utf8');
    const runtimeVersion = cri!.version.runtimeVersion;
    expect(cri!.version.runtimeName).toBe('containerd');
    // 1.x answers `1.6.20~ds1`, 2.x `v2.1.9+unknown` or `2.1.9+unknown`.
    expect(runtimeVersion.replace(/^v/, '')).toMatch(new RegExp(`^${version.replace('.', '\\.')}\\.`));
    expect(config).toMatch(new RegExp(`^version = ${version.startsWith('1.') ? 2 : 3}$`, 'm'));
    expect(config).toContain(`BinaryName = "${MACHINE_RUNC}"`);
    expect(config).toContain(`"${TEST_IMAGES.pause}"`);
  });

  it('runs a pod from the test images and stops and removes it', async () => {
    const runtime = cri!.runtime;
    const uid = `versions-${version}-${process.pid}`;
    const logDirectory = path.join(tmp, version, `default_hello_${uid}`);
    fs.mkdirSync(path.join(logDirectory, 'hello'), { recursive: true });
    const sandboxConfig = {
      metadata: { name: 'hello', uid, namespace: 'default', attempt: 0 },
      hostname: '',
      logDirectory,
      labels: { 'io.kubernetes.pod.uid': uid },
      linux: { securityContext: { namespaceOptions: hostNetwork } },
    };
    const sandboxId = await runtime.runPodSandbox(sandboxConfig);
    const id = await runtime.createContainer(
      sandboxId,
      {
        metadata: { name: 'hello', attempt: 0 },
        image: { image: TEST_IMAGES.busybox },
        command: ['sh', '-c', `echo hello from ${version}; sleep 3600`],
        logPath: 'hello/0.log',
        linux: { securityContext: { namespaceOptions: hostNetwork } },
      },
      sandboxConfig,
    );
    await runtime.startContainer(id);
    const logPath = path.join(logDirectory, 'hello', '0.log');
    await waitFor(
      () => fs.existsSync(logPath) && fs.readFileSync(logPath, 'utf8').includes(` stdout F hello from ${version}`),
      { timeoutMs: 60_000, what: `the container's line in ${logPath}` },
    );
    expect((await runtime.containerStatus(id)).state).toBe(ContainerState.CONTAINER_RUNNING);
    expect((await runtime.podSandboxStatus(sandboxId)).state).toBe(PodSandboxState.SANDBOX_READY);

    await runtime.stopContainer(id, 2);
    expect((await runtime.containerStatus(id)).state).toBe(ContainerState.CONTAINER_EXITED);
    await runtime.stopPodSandbox(sandboxId);
    await runtime.removePodSandbox(sandboxId);
    expect(await runtime.listPodSandbox()).toHaveLength(0);
    expect(await runtime.listContainers()).toHaveLength(0);
  });

  it('stops with a pod still running and leaves no process, mount or directory behind', async () => {
    const runtime = cri!.runtime;
    const uid = `versions-left-${version}-${process.pid}`;
    const sandboxId = await runtime.runPodSandbox({
      metadata: { name: 'left', uid, namespace: 'default', attempt: 0 },
      hostname: '',
      linux: { securityContext: { namespaceOptions: hostNetwork } },
    });
    expect((await runtime.podSandboxStatus(sandboxId)).state).toBe(PodSandboxState.SANDBOX_READY);
    const { dir, socket } = cd!;
    expect(mountsUnder(dir).length).toBeGreaterThan(0);
    expect(processesNaming(socket).length).toBeGreaterThanOrEqual(2); // containerd and the sandbox's shim
    runtime.close();
    cri = undefined;
    await cd!.stop();
    cd = undefined;
    expect(mountsUnder(dir)).toEqual([]);
    expect(fs.existsSync(dir)).toBe(false);
    expect(processesNaming(socket)).toEqual([]);
  });
});

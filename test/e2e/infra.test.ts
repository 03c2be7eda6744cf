// The test harness itself, end to end: a private containerd starts, takes our locally built
// images, runs hostNetwork pods through the CRI (busybox, etcd), and leaves nothing behind.
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../../dev/containerd.js';
import { buildTestImages, importTestImages, TEST_IMAGES } from '../../dev/images.js';
import { mountsUnder } from '../../dev/mounts.js';
import { connectRuntime, type RuntimeConnection } from '../../src/cri/cri-client.js';
import {
  ContainerState,
  NamespaceMode,
  type ContainerConfig,
  type NamespaceOption,
  type PodSandboxConfig,
} from '../../src/cri/cri-types.js';
import { freePorts } from '../support/ports.js';
import { useTmpDir } from '../support/tmp.js';
import { processesNaming } from '../support/processes-naming.js';
import { waitFor } from '../support/wait.js';

const tmp = useTmpDir('infra');
let cd: PrivateContainerd;
let cri: RuntimeConnection;

const hostNetwork: NamespaceOption = {
  network: NamespaceMode.NODE,
  pid: NamespaceMode.CONTAINER,
  ipc: NamespaceMode.POD,
};

/** The generated input types have every field optional; these tests read back what they set. */
type SandboxConfig = PodSandboxConfig & { logDirectory: string };
type NamedContainerConfig = ContainerConfig & { metadata: { name: string } };

function sandboxConfig(name: string): SandboxConfig {
  const uid = `infra-${name}-${process.pid}`;
  const logDirectory = path.join(tmp, 'pods', `default_${name}_${uid}`);
  fs.mkdirSync(logDirectory, { recursive: true });
  return {
    metadata: { name, uid, namespace: 'default', attempt: 0 },
    // runc cannot set a hostname without a UTS namespace of the pod's own.
    hostname: '',
    logDirectory,
    portMappings: [],
    labels: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': uid },
    annotations: {},
    linux: { securityContext: { namespaceOptions: hostNetwork } },
  };
}

function containerConfig(
  name: string,
  image: string,
  command: string[],
  extra: Omit<ContainerConfig, 'metadata'> = {},
): NamedContainerConfig {
  return {
    metadata: { name, attempt: 0 },
    image: { image },
    command,
    args: [],
    workingDir: '',
    envs: [],
    mounts: [],
    labels: { 'io.kubernetes.container.name': name },
    annotations: {},
    logPath: `${name}/0.log`,
    linux: { securityContext: { namespaceOptions: hostNetwork } },
    ...extra,
  };
}

async function runPod(
  name: string,
  containers: NamedContainerConfig[],
): Promise<{ sandboxId: string; ids: string[]; config: SandboxConfig }> {
  const config = sandboxConfig(name);
  const sandboxId = await cri.runtime.runPodSandbox(config);
  const ids: string[] = [];
  for (const c of containers) {
    fs.mkdirSync(path.join(config.logDirectory, c.metadata.name), { recursive: true });
    const id = await cri.runtime.createContainer(sandboxId, c, config);
    await cri.runtime.startContainer(id);
    ids.push(id);
  }
  return { sandboxId, ids, config };
}

async function removePod(sandboxId: string): Promise<void> {
  await cri.runtime.stopPodSandbox(sandboxId);
  await cri.runtime.removePodSandbox(sandboxId);
}

beforeAll(async () => {
  const images = await buildTestImages();
  cd = await startContainerd({ name: 'infra' });
  await importTestImages(cd, images);
  cri = await connectRuntime(cd.endpoint, { connectTimeoutMs: 30_000 });
});

afterAll(async () => {
  try {
    if (cri) {
      for (const s of await cri.runtime.listPodSandbox().catch(() => [])) {
        await removePod(s.id).catch(() => undefined);
      }
      cri.runtime.close();
    }
  } finally {
    await cd?.stop();
  }
});

describe('test images', () => {
  it('are OCI image layouts built byte for byte the same every time', async () => {
    const [a, b] = [path.join(tmp, 'images-a'), path.join(tmp, 'images-b')];
    const first = await buildTestImages(a);
    const second = await buildTestImages(b);
    for (const which of Object.keys(TEST_IMAGES) as (keyof typeof TEST_IMAGES)[]) {
      expect(fs.readFileSync(first[which]).equals(fs.readFileSync(second[which])), which).toBe(true);
      const listing = execFileSync('tar', ['-tf', first[which]], { encoding: 'utf8' }).split('\n');
      expect(listing).toContain('oci-layout');
      expect(listing).toContain('index.json');
      const index = JSON.parse(execFileSync('tar', ['-xOf', first[which], 'index.json'], { encoding: 'utf8' })) as {
        manifests: { annotations: Record<string, string>; platform: { os: string } }[];
      };
      expect(index.manifests[0]!.annotations['io.containerd.image.name']).toBe(TEST_IMAGES[which]);
      expect(index.manifests[0]!.platform.os).toBe('linux');
    }
  });
});

describe('private containerd', () => {
  it('serves the CRI with our images, pause as the sandbox image', async () => {
    expect(cri.version.runtimeName).toBe('containerd');
    expect(cd.endpoint).toBe(`unix://${cd.socket}`);
    const tags = (await cri.images.listImages()).flatMap((i) => i.repoTags);
    for (const name of Object.values(TEST_IMAGES)) expect(tags).toContain(name);
    const config = fs.readFileSync(path.join(cd.dir, 'config.toml'), 'utf8');
    // 1.x: sandbox_image in the CRI section; 2.x: the images plugin's pinned_images.sandbox.
    expect(config).toMatch(
      new RegExp(`^\\s*(sandbox_image|sandbox) = "${TEST_IMAGES.pause.replace(/[.]/g, '\\.')}"$`, 'm'),
    );
    expect(config).toContain('restrict_oom_score_adj = true');
  });

  it('runs a hostNetwork busybox pod and writes its log in the CRI format', async () => {
    const { sandboxId, ids, config } = await runPod('hello', [
      containerConfig('hello', TEST_IMAGES.busybox, ['sh', '-c', 'echo hi; sleep 3600']),
    ]);
    const id = ids[0]!;
    const status = await waitFor(
      async () => {
        const s = await cri.runtime.containerStatus(id);
        return s.state === ContainerState.CONTAINER_RUNNING && s;
      },
      { timeoutMs: 60_000, what: 'busybox container to be RUNNING' },
    );
    expect(status.logPath).toBe(path.join(config.logDirectory, 'hello/0.log'));
    const line = await waitFor(
      () => {
        const text = fs.existsSync(status.logPath) ? fs.readFileSync(status.logPath, 'utf8') : '';
        return text.split('\n').find((l) => / stdout F hi$/.test(l));
      },
      { timeoutMs: 30_000, what: `"hi" in ${status.logPath}` },
    );
    expect(Number.isNaN(Date.parse(line.split(' ')[0]!))).toBe(false);

    const sandbox = await cri.runtime.podSandboxStatus(sandboxId);
    expect(sandbox.state).toBe(0);

    await cri.runtime.stopContainer(id, 2);
    expect((await cri.runtime.containerStatus(id)).state).toBe(ContainerState.CONTAINER_EXITED);
    await removePod(sandboxId);
    expect(await cri.runtime.listPodSandbox()).toHaveLength(0);
  });

  it('runs etcd from the etcd image with its data on a hostPath, /health answers', async () => {
    const [client, peer, metrics] = await freePorts(3);
    const dataDir = path.join(tmp, 'etcd-data');
    fs.mkdirSync(dataDir, { recursive: true });
    const etcd = containerConfig('etcd', TEST_IMAGES.etcd, ['etcd'], {
      args: [
        '--name=infra',
        '--data-dir=/var/lib/etcd',
        `--listen-client-urls=http://127.0.0.1:${client}`,
        `--advertise-client-urls=http://127.0.0.1:${client}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=infra=http://127.0.0.1:${peer}`,
        `--listen-metrics-urls=http://127.0.0.1:${metrics}`,
      ],
      mounts: [{ containerPath: '/var/lib/etcd', hostPath: dataDir, readonly: false }],
    });
    const { sandboxId, ids } = await runPod('etcd', [etcd]);
    for (const port of [client, metrics]) {
      const body = await waitFor(
        async () => {
          const state = (await cri.runtime.containerStatus(ids[0]!)).state;
          if (state === ContainerState.CONTAINER_EXITED) throw new Error('etcd exited');
          const res = await fetch(`http://127.0.0.1:${port}/health`);
          return res.ok && ((await res.json()) as { health?: string });
        },
        { timeoutMs: 60_000, intervalMs: 250, what: `etcd /health on 127.0.0.1:${port}` },
      );
      expect(body.health).toBe('true');
    }
    expect(fs.existsSync(path.join(dataDir, 'member'))).toBe(true);
    await removePod(sandboxId);
  });

  it('stop() leaves no process, mount or directory behind, even with a pod running', async () => {
    await runPod('left-running', [containerConfig('sleeper', TEST_IMAGES.busybox, ['sleep', '3600'])]);
    cri.runtime.close();
    const { dir, socket, pid } = cd;
    await cd.stop();
    expect(fs.existsSync(dir)).toBe(false);
    expect(mountsUnder(dir)).toEqual([]);
    expect(
      fs.existsSync(`/proc/${pid}/cmdline`) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(socket),
    ).toBe(false);
    expect(processesNaming(socket)).toEqual([]);
  });

  it('cleans up after a run that crashed with its containerd and a container still running', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../support/fixtures/crashing-containerd.ts', import.meta.url))],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const started = await waitFor(
      () =>
        out.includes('\n')
          ? (JSON.parse(out.split('\n')[0]!) as { dir: string; socket: string; pid: number })
          : undefined,
      {
        timeoutMs: 120_000,
        what: 'the crashing run to start its containerd',
      },
    );
    expect(processesNaming(started.socket).length).toBeGreaterThanOrEqual(2); // containerd and the shim
    expect(mountsUnder(started.dir).length).toBeGreaterThan(0); // the container's rootfs
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;

    const cleaned = await cleanupStaleContainerds();
    expect(cleaned).toContain(started.dir);
    expect(fs.existsSync(started.dir)).toBe(false);
    expect(mountsUnder(started.dir)).toEqual([]);
    expect(processesNaming(started.socket)).toEqual([]);
  });
});

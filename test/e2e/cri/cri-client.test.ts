// The runtime part against a real private containerd: connect, image policy, a host-network pod
// built by sandbox-config / volumes / container-config, read back through the labels, exec, stop
// and remove; and the connect errors an operator sees for a wrong endpoint.
import * as grpc from '@grpc/grpc-js';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../../../dev/images.js';
import type { StaticPod } from '../../../src/config/types.js';
import { buildContainerConfig } from '../../../src/kuberuntime/container-config.js';
import { hashContainer, kubeletContainerHash } from '../../../src/kuberuntime/container-hash.js';
import { connectRuntime, RuntimeConnectError, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import { ContainerState, CriError, PodSandboxState, type ContainerEventResponse } from '../../../src/cri/cri-types.js';
import { ensureImage, ImageError } from '../../../src/kuberuntime/images.js';
import { listRuntimePods, readRuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { buildSandboxConfig } from '../../../src/kuberuntime/sandbox-config.js';
import { prepareVolumes, removePodDirs } from '../../../src/node/volumes.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

// Registered first so that it runs last, after containerd is stopped.
const tmp = useTmpDir('runtime-cri');
const rootDir = path.join(tmp, 'root');
const podLogsDir = path.join(tmp, 'logs');
const hostDir = path.join(tmp, 'host-data');
const UID = 'e2e0000000000000000000000000' + process.pid.toString(16).padStart(4, '0').slice(-4);

let cd: PrivateContainerd | undefined;
let cri: RuntimeConnection | undefined;
const sandboxes: string[] = [];
const containers: string[] = [];
const servers: { close(): void }[] = [];

const busybox = {
  name: 'app',
  image: TEST_IMAGES.busybox,
  imagePullPolicy: 'IfNotPresent' as const,
  command: ['/bin/sh', '-c', 'echo started $(GREETING); exec sleep 3600'],
  env: [
    { name: 'GREETING', value: 'hello' },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
  ],
  volumeMounts: [
    { name: 'data', mountPath: '/data' },
    { name: 'scratch', mountPath: '/scratch' },
  ],
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File' as const,
};

const pod: StaticPod['pod'] = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'rt-e2e-node1',
    namespace: 'default',
    uid: UID,
    labels: { app: 'rt-e2e' },
    annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': UID },
  },
  spec: {
    hostNetwork: true,
    nodeName: 'node1',
    dnsPolicy: 'ClusterFirst',
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    securityContext: {},
    volumes: [
      { name: 'data', hostPath: { path: hostDir, type: 'DirectoryOrCreate' } },
      { name: 'scratch', emptyDir: {} },
    ],
    containers: [busybox],
  },
};

beforeAll(async () => {
  cd = await startContainerd({ name: 'runtime-cri' });
  await importTestImages(cd);
  cri = await connectRuntime(cd.endpoint);
});

afterAll(async () => {
  // Best effort, in order, whatever state a failed test left behind.
  const rt = cri?.runtime;
  for (const id of containers) await rt?.removeContainer(id).catch(() => undefined);
  for (const id of sandboxes) {
    await rt?.stopPodSandbox(id).catch(() => undefined);
    await rt?.removePodSandbox(id).catch(() => undefined);
  }
  rt?.close();
  for (const s of servers) s.close();
  await cd?.stop();
  await removePodDirs(rootDir, UID).catch(() => undefined);
});

describe('connectRuntime against containerd', () => {
  it('announces the runtime via Version', () => {
    expect(cri!.version).toMatchObject({ runtimeName: 'containerd', runtimeApiVersion: 'v1' });
    expect(cri!.version.runtimeVersion).not.toBe('');
  });

  it('reports runtime conditions via Status', async () => {
    const st = await cri!.runtime.status();
    expect(st.conditions.find((c) => c.type === 'RuntimeReady')?.status).toBe(true);
  });

  it('turns call errors into CriError with the gRPC code', async () => {
    const err = await cri!.runtime.containerStatus('no-such-container').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CriError);
    expect((err as CriError).notFound).toBe(true);
    expect((err as CriError).method).toBe('ContainerStatus');
  });

  it('serves images from imageServiceEndpoint when that is another endpoint', async () => {
    const other = cd!.endpoint.replace(/^unix:\/\//, ''); // the same socket, named as a path
    const c = await connectRuntime(cd!.endpoint, { imageServiceEndpoint: other });
    try {
      expect((await c.images.listImages()).some((i) => i.repoTags.includes(TEST_IMAGES.busybox))).toBe(true);
      expect((await c.runtime.status()).conditions.length).toBeGreaterThan(0);
    } finally {
      c.runtime.close();
    }
    const missing = `unix://${path.join(tmp, 'no-images.sock')}`;
    await expect(connectRuntime(cd!.endpoint, { imageServiceEndpoint: missing })).rejects.toThrow(
      new RuntimeConnectError(missing, 'no such socket'),
    );
  });
});

describe('images', () => {
  it('IfNotPresent finds the imported busybox without pulling', async () => {
    const sb = buildSandboxConfig(pod, { podLogsDir, attempt: 0 });
    const r = await ensureImage(cri!.images, busybox, sb);
    expect(r.pulled).toBe(false);
    expect(r.imageRef).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await cri!.images.listImages()).some((i) => i.repoTags.includes(TEST_IMAGES.busybox))).toBe(true);
  });

  it('Never with a missing image is ErrImageNeverPull', async () => {
    const sb = buildSandboxConfig(pod, { podLogsDir, attempt: 0 });
    const err = await ensureImage(cri!.images, { image: 'bootlet.local/absent:1', imagePullPolicy: 'Never' }, sb).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ImageError);
    expect((err as ImageError).reason).toBe('ErrImageNeverPull');
  });

  it("a pull that cannot succeed is ErrImagePull with containerd's reason", async () => {
    const sb = buildSandboxConfig(pod, { podLogsDir, attempt: 0 });
    const err = await ensureImage(
      cri!.images,
      { image: 'bootlet.invalid/absent:1', imagePullPolicy: 'Always' },
      sb,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageError);
    expect((err as ImageError).reason).toBe('ErrImagePull');
    expect((err as ImageError).message).toMatch(/bootlet\.invalid\/absent:1/);
  });
});

describe('a host-network pod through the CRI', () => {
  let sandboxId = '';
  let containerId = '';
  const events: ContainerEventResponse[] = [];
  let eventsEnd: { err?: CriError } | undefined;

  it('runs the sandbox', async () => {
    const resolvConf = fs.existsSync('/etc/resolv.conf') ? fs.readFileSync('/etc/resolv.conf', 'utf8') : undefined;
    const sb = buildSandboxConfig(pod, { podLogsDir, attempt: 0, resolvConf });
    expect(sb.hostname).toBe('');
    fs.mkdirSync(sb.logDirectory!, { recursive: true, mode: 0o755 });
    sandboxId = await cri!.runtime.runPodSandbox(sb);
    sandboxes.push(sandboxId);
    const st = await cri!.runtime.podSandboxStatus(sandboxId);
    expect(st.state).toBe(PodSandboxState.SANDBOX_READY);
    expect(st.labels['io.kubernetes.pod.uid']).toBe(UID);
    expect(st.metadata).toMatchObject({ name: 'rt-e2e-node1', namespace: 'default', uid: UID, attempt: 0 });
  });

  it('subscribes to container events (or learns the runtime has none)', () => {
    const sub = cri!.runtime.getContainerEvents(
      (e) => events.push(e),
      (err) => {
        eventsEnd = { err };
      },
    );
    servers.push({ close: () => sub.cancel() });
  });

  it('creates and starts the container', async () => {
    const sb = buildSandboxConfig(pod, { podLogsDir, attempt: 0 });
    const { imageRef } = await ensureImage(cri!.images, busybox, sb);
    const mounts = await prepareVolumes(pod, busybox, { rootDir });
    const config = buildContainerConfig(pod, busybox, {
      restartCount: 0,
      imageRef,
      type: 'container',
      nodeName: 'node1',
      hostIP: '127.0.0.1',
      podIPs: [],
      mounts,
      nodeMemoryCapacityBytes: os.totalmem(),
    });
    fs.mkdirSync(path.join(sb.logDirectory!, busybox.name), { recursive: true, mode: 0o755 });
    containerId = await cri!.runtime.createContainer(sandboxId, config, sb);
    containers.push(containerId);
    await cri!.runtime.startContainer(containerId);
    const st = await cri!.runtime.containerStatus(containerId);
    expect(st.state).toBe(ContainerState.CONTAINER_RUNNING);
    expect(st.image?.image).toBe(TEST_IMAGES.busybox);
  });

  it('is found again by its labels, with hash and restart count', async () => {
    const pods = await listRuntimePods(cri!.runtime);
    const p = pods.get(UID);
    expect(p).toMatchObject({ uid: UID, name: 'rt-e2e-node1', namespace: 'default' });
    expect(p!.sandboxes.map((s) => [s.id, s.state, s.attempt])).toEqual([
      [sandboxId, PodSandboxState.SANDBOX_READY, 0],
    ]);
    expect(p!.containers).toHaveLength(1);
    expect(p!.containers[0]).toMatchObject({
      id: containerId,
      sandboxId,
      name: 'app',
      state: ContainerState.CONTAINER_RUNNING,
      meta: {
        hash: kubeletContainerHash(busybox),
        specHash: hashContainer(busybox),
        restartCount: 0,
        type: 'container',
        terminationGracePeriodSeconds: 30,
        terminationMessagePath: '/dev/termination-log',
      },
    });
    const full = await readRuntimePod(cri!.runtime, UID);
    expect(full!.containers[0]!.startedAt).toBeGreaterThan(0);
    expect(full!.containers[0]!.imageRef).toMatch(/sha256:/);
  });

  it('executes commands in it and sees what the config asked for', async () => {
    const script = [
      'echo "greeting=$GREETING pod=$POD_NAME"',
      'head -1 /etc/hosts',
      'cat /proc/self/oom_score_adj',
      'touch /data/from-container /scratch/x',
      'echo msg > /dev/termination-log',
    ].join('; ');
    const r = await cri!.runtime.execSync(containerId, ['/bin/sh', '-c', script], 10);
    expect(r.stderr.toString()).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout.toString().split('\n')).toEqual([
      'greeting=hello pod=rt-e2e-node1',
      '# Kubernetes-managed hosts file (host network).',
      // BestEffort
      '1000',
      '',
    ]);
    expect(fs.existsSync(path.join(hostDir, 'from-container'))).toBe(true);
    const fail = await cri!.runtime.execSync(containerId, ['/bin/sh', '-c', 'exit 3'], 10);
    expect(fail.exitCode).toBe(3);
  });

  it('writes its log where the kubelet would', async () => {
    const log = path.join(podLogsDir, `default_rt-e2e-node1_${UID}`, 'app', '0.log');
    await waitFor(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes('started hello'), {
      timeoutMs: 20_000,
      what: `"started hello" in ${log}`,
    });
    expect(fs.readFileSync(log, 'utf8')).toMatch(/^\S+ stdout F started hello$/m);
  });

  it('stops and removes everything', async () => {
    await cri!.runtime.stopContainer(containerId, 2);
    const st = await cri!.runtime.containerStatus(containerId);
    expect(st.state).toBe(ContainerState.CONTAINER_EXITED);
    await cri!.runtime.removeContainer(containerId);
    await cri!.runtime.stopPodSandbox(sandboxId);
    await cri!.runtime.removePodSandbox(sandboxId);
    expect((await listRuntimePods(cri!.runtime)).has(UID)).toBe(false);
    // NotFound after removal, which callers treat as done
    const again = await cri!.runtime.removeContainer(containerId).catch((e: unknown) => e);
    expect(again === undefined || (again instanceof CriError && again.notFound)).toBe(true);
  });

  it('saw container events, or the stream ended with UNIMPLEMENTED on a runtime without them', async () => {
    await waitFor(() => eventsEnd !== undefined || events.some((e) => e.containerId === containerId), {
      timeoutMs: 20_000,
      what: 'container events or the end of the stream',
    });
    if (eventsEnd?.err) expect(eventsEnd.err.code).toBe(grpc.status.UNIMPLEMENTED);
    else expect(events.filter((e) => e.containerId === containerId).length).toBeGreaterThan(0);
  });
});

describe('security context and resources reach the container', () => {
  const uid = UID.slice(0, 28) + 'beef';
  const limited = {
    name: 'limited',
    image: TEST_IMAGES.busybox,
    imagePullPolicy: 'IfNotPresent' as const,
    command: ['/bin/sleep', '3600'],
    resources: { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '500m', memory: '64Mi' } },
    securityContext: {
      runAsUser: 1000,
      runAsGroup: 3000,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { add: ['NET_ADMIN' as const], drop: ['ALL' as const] },
    },
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File' as const,
  };
  const pod2: StaticPod['pod'] = {
    ...pod,
    metadata: { ...pod.metadata, name: 'rt-limits-node1', uid },
    spec: { ...pod.spec!, volumes: [], containers: [limited] },
  };

  it('applies user, capabilities, no_new_privs, read-only rootfs, cpu and memory limits, oom score', async () => {
    const sb = buildSandboxConfig(pod2, { podLogsDir, attempt: 0 });
    fs.mkdirSync(path.join(sb.logDirectory!, limited.name), { recursive: true });
    const sandboxId = await cri!.runtime.runPodSandbox(sb);
    sandboxes.push(sandboxId);
    const { imageRef } = await ensureImage(cri!.images, limited, sb);
    const config = buildContainerConfig(pod2, limited, {
      restartCount: 0,
      imageRef,
      type: 'container',
      nodeName: 'node1',
      hostIP: '127.0.0.1',
      podIPs: [],
      mounts: await prepareVolumes(pod2, limited, { rootDir }),
      nodeMemoryCapacityBytes: os.totalmem(),
    });
    const id = await cri!.runtime.createContainer(sandboxId, config, sb);
    containers.push(id);
    await cri!.runtime.startContainer(id);
    const script = [
      'id -u; id -g',
      "grep -E '^(CapBnd|NoNewPrivs):' /proc/self/status | tr -s '\\t ' ' '",
      'touch /rootfs-write 2>/dev/null && echo rootfs-writable || echo rootfs-readonly',
      'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes',
      'cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo "$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"',
      'cat /sys/fs/cgroup/cpu.weight 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.shares',
      'cat /proc/self/oom_score_adj',
    ].join('; ');
    const r = await cri!.runtime.execSync(id, ['/bin/sh', '-c', script], 10);
    expect(r.stderr.toString()).toBe('');
    const lines = r.stdout.toString().trim().split('\n');
    const cgroupV2 = fs.existsSync('/sys/fs/cgroup/cgroup.controllers');
    // CAP_NET_ADMIN is bit 12 and the only capability left in the bounding set after drop ALL
    // (the effective set of a non-root user is empty anyway).
    expect(lines.slice(0, 5)).toEqual(['1000', '3000', 'CapBnd: 0000000000001000', 'NoNewPrivs: 1', 'rootfs-readonly']);
    expect(lines[5]).toBe(String(64 * 2 ** 20));
    expect(lines[6]).toBe('50000 100000');
    // shares 256 for 250m (v2 shows the converted weight)
    if (!cgroupV2) expect(lines[7]).toBe('256');
    // Burstable: 1000 - 1000 * 64Mi / node memory
    expect(lines[8]).toBe(String(1000 - Math.floor((1000 * 64 * 2 ** 20) / os.totalmem())));
  });
});

describe('connect errors name the endpoint and the problem', () => {
  it('missing socket', async () => {
    const ep = `unix://${path.join(tmp, 'missing.sock')}`;
    await expect(connectRuntime(ep)).rejects.toThrow(new RuntimeConnectError(ep, 'no such socket'));
  });

  it('a path that is not a socket', async () => {
    const f = path.join(tmp, 'plain-file');
    fs.writeFileSync(f, '');
    await expect(connectRuntime(f)).rejects.toThrow(`container runtime endpoint ${f}: ${f} is not a socket`);
  });

  it('an endpoint that is not a unix socket', async () => {
    await expect(connectRuntime('tcp://127.0.0.1:1')).rejects.toThrow(
      /^container runtime endpoint tcp:\/\/127\.0\.0\.1:1: unsupported scheme/,
    );
  });

  it('a gRPC server without the CRI services', async () => {
    const sock = path.join(tmp, 'not-cri.sock');
    const server = new grpc.Server();
    await new Promise<void>((resolve, reject) =>
      server.bindAsync(`unix://${sock}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    servers.push({ close: () => server.forceShutdown() });
    const err = await connectRuntime(`unix://${sock}`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RuntimeConnectError);
    expect((err as Error).message).toBe(
      `container runtime endpoint unix://${sock}: does not serve CRI runtime.v1 (UNIMPLEMENTED): is the CRI plugin enabled?`,
    );
  });

  it('a socket that never answers', async () => {
    const sock = path.join(tmp, 'silent.sock');
    const held: net.Socket[] = [];
    const server = net.createServer((s) => held.push(s));
    await new Promise<void>((r) => server.listen(sock, r));
    servers.push({
      close: () => {
        held.forEach((s) => s.destroy());
        server.close();
      },
    });
    await expect(connectRuntime(`unix://${sock}`, { connectTimeoutMs: 1000 })).rejects.toThrow(
      `container runtime endpoint unix://${sock}: did not answer within 1s`,
    );
  });

  it('a stale socket nobody listens on', async () => {
    const sock = path.join(tmp, 'stale.sock');
    // What a crashed runtime leaves behind: a socket file no one listens on. Node unlinks the
    // socket on close, so keep a second name for it across the close.
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(sock, r));
    fs.linkSync(sock, `${sock}.keep`);
    await new Promise<void>((r) => server.close(() => r()));
    fs.renameSync(`${sock}.keep`, sock);
    expect(fs.statSync(sock).isSocket()).toBe(true);
    await expect(connectRuntime(`unix://${sock}`, { connectTimeoutMs: 3000 })).rejects.toThrow(
      new RegExp(`^container runtime endpoint unix://${sock.replace(/[.]/g, '\\.')}: cannot connect: `),
    );
  });
});

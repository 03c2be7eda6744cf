// A new sandbox's first starts look up their image and make their log directory while
// RunPodSandbox is in flight (issue 18); the start then uses those answers and asks no second time.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import type { ContainerConfig, ImageService, RuntimeService } from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { containerLogDirectory } from '../../../src/node/pod-logs/layout.js';
import { container, pod } from './fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'bootlet-starts-ahead-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Harness {
  pods: CriPodRuntime;
  calls: string[];
  created: ContainerConfig[];
  rootDir: string;
  /** Resolves the pending RunPodSandbox. */
  finishSandbox: () => void;
  sandboxAsked: Promise<void>;
}

function harness(imageStatus: (image: string) => Promise<{ id: string } | undefined>): Harness {
  const calls: string[] = [];
  const created: ContainerConfig[] = [];
  let finishSandbox!: () => void;
  let asked!: () => void;
  const sandboxAsked = new Promise<void>((r) => (asked = r));
  const runtime = {
    runPodSandbox: () =>
      new Promise<string>((resolve) => {
        calls.push('RunPodSandbox');
        asked();
        finishSandbox = () => {
          calls.push('RunPodSandbox returned');
          resolve('sb-1');
        };
      }),
    podSandboxStatus: async () => ({ network: { ip: '10.1.0.9', additionalIps: [] } }),
    createContainer: async (_id: string, c: ContainerConfig) => (
      calls.push('CreateContainer'),
      created.push(c),
      `c-${created.length}`
    ),
    startContainer: async () => void calls.push('StartContainer'),
  } as unknown as RuntimeService;
  const images = {
    imageStatus: async ({ image }: { image: string }) => (calls.push(`ImageStatus ${image}`), imageStatus(image)),
    pullImage: async ({ image }: { image: string }) => (calls.push(`PullImage ${image}`), 'sha256:pulled'),
  } as unknown as ImageService;
  const pods = new CriPodRuntime({
    runtime,
    images,
    rootDir: join(dir, `root-${Math.random()}`),
    podLogsDir: join(dir, `pods-${Math.random()}`),
    nodeName: 'node1',
    nodeIP: '10.0.0.7',
    resolvConf: '',
    logger: createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } }),
  });
  return {
    pods,
    calls,
    created,
    rootDir: (pods as unknown as { o: { rootDir: string } }).o.rootDir,
    get finishSandbox() {
      return finishSandbox;
    },
    sandboxAsked,
  };
}

describe('look-ups ahead of the first starts', () => {
  it('asks ImageStatus and makes the log directory while RunPodSandbox is in flight, and asks once', async () => {
    const h = harness(async () => ({ id: 'sha256:busybox' }));
    const p = pod({
      spec: {
        hostNetwork: true,
        containers: [container({ name: 'a', image: 'busybox:1.36' }), container({ name: 'b', image: 'etcd:3.4' })],
      },
    });
    const made = h.pods.createSandbox(p, 0, p.spec!.containers);
    await h.sandboxAsked;
    const logsDir = (h.pods as unknown as { o: { podLogsDir: string } }).o.podLogsDir;
    // Nothing but the look-ups before the sandbox is there.
    await expect.poll(() => h.calls).toEqual(['RunPodSandbox', 'ImageStatus busybox:1.36', 'ImageStatus etcd:3.4']);
    await expect.poll(() => existsSync(containerLogDirectory(logsDir, p, 'b'))).toBe(true);
    h.finishSandbox();
    const sandbox = await made;
    for (const c of p.spec!.containers) await h.pods.startContainer(p, sandbox, c, 'container', undefined);
    expect(h.calls.filter((c) => c.startsWith('ImageStatus'))).toHaveLength(2);
    expect(h.created.map((c) => [c.image?.image, c.metadata?.attempt])).toEqual([
      ['sha256:busybox', 0],
      ['sha256:busybox', 0],
    ]);
    // A second start of the same name (a restart) asks again.
    await h.pods.startContainer(p, sandbox, p.spec!.containers[0]!, 'container', 1);
    expect(h.calls.filter((c) => c.startsWith('ImageStatus'))).toHaveLength(3);
  });

  it('takes the restart count from log files read ahead, and pulls only after the sandbox, as before', async () => {
    const h = harness(async () => undefined);
    const p = pod({ spec: { hostNetwork: true, containers: [container({ name: 'a', image: 'busybox:1.36' })] } });
    const logsDir = (h.pods as unknown as { o: { podLogsDir: string } }).o.podLogsDir;
    const cdir = containerLogDirectory(logsDir, p, 'a');
    mkdirSync(cdir, { recursive: true });
    writeFileSync(join(cdir, '3.log'), '');
    const made = h.pods.createSandbox(p, 0, p.spec!.containers);
    await h.sandboxAsked;
    await expect.poll(() => h.calls).toEqual(['RunPodSandbox', 'ImageStatus busybox:1.36']);
    h.finishSandbox();
    const sandbox = await made;
    await h.pods.startContainer(p, sandbox, p.spec!.containers[0]!, 'container', undefined);
    expect(h.calls).toEqual([
      'RunPodSandbox',
      'ImageStatus busybox:1.36',
      'RunPodSandbox returned',
      'PullImage busybox:1.36',
      'CreateContainer',
      'StartContainer',
    ]);
    expect(h.created[0]!.metadata?.attempt).toBe(4);
  });

  it('pull policy Always: no look-up ahead, the start pulls', async () => {
    const h = harness(async () => ({ id: 'sha256:old' }));
    const p = pod({
      spec: {
        hostNetwork: true,
        containers: [container({ name: 'a', image: 'busybox:latest', imagePullPolicy: 'Always' })],
      },
    });
    const made = h.pods.createSandbox(p, 0, p.spec!.containers);
    await h.sandboxAsked;
    h.finishSandbox();
    const sandbox = await made;
    await h.pods.startContainer(p, sandbox, p.spec!.containers[0]!, 'container', 0);
    expect(h.calls.filter((c) => c.startsWith('ImageStatus') || c.startsWith('PullImage'))).toEqual([
      'PullImage busybox:latest',
    ]);
  });

  it("a host-network pod's volumes (its /etc/hosts, its termination-message file) are made while RunPodSandbox is in flight, once", async () => {
    const h = harness(async () => ({ id: 'sha256:busybox' }));
    const p = pod({
      spec: {
        hostNetwork: true,
        containers: [container({ name: 'a', image: 'busybox:1.36', terminationMessagePath: '/dev/termination-log' })],
      },
    });
    const made = h.pods.createSandbox(p, 0, p.spec!.containers);
    await h.sandboxAsked;
    const podDir = join(h.rootDir, 'pods', p.metadata.uid);
    await expect.poll(() => existsSync(join(podDir, 'etc-hosts'))).toBe(true);
    await expect
      .poll(() =>
        existsSync(join(podDir, 'containers', 'a')) ? readdirSync(join(podDir, 'containers', 'a')).length : 0,
      )
      .toBe(1);
    expect(h.calls).toEqual(['RunPodSandbox', 'ImageStatus busybox:1.36']);
    h.finishSandbox();
    const sandbox = await made;
    await h.pods.startContainer(p, sandbox, p.spec!.containers[0]!, 'container', undefined);
    // The start used what was made ahead: no second termination-message file.
    expect(readdirSync(join(podDir, 'containers', 'a'))).toHaveLength(1);
    expect(h.created[0]!.mounts?.map((m) => m.containerPath)).toEqual(['/etc/hosts', '/dev/termination-log']);
  });

  it('a pod-network pod waits for its sandbox (its IP goes into /etc/hosts), and an image still to pull makes nothing ahead', async () => {
    const h = harness(async () => undefined);
    const own = pod({ spec: { containers: [container({ name: 'a', image: 'busybox:1.36' })] } });
    const made = h.pods.createSandbox(own, 0, own.spec!.containers);
    await h.sandboxAsked;
    await expect.poll(() => h.calls).toEqual(['RunPodSandbox', 'ImageStatus busybox:1.36']);
    expect(existsSync(join(h.rootDir, 'pods', own.metadata.uid))).toBe(false);
    h.finishSandbox();
    await made;

    const h2 = harness(async () => undefined);
    const host = pod({ spec: { hostNetwork: true, containers: [container({ name: 'a', image: 'busybox:1.36' })] } });
    const made2 = h2.pods.createSandbox(host, 0, host.spec!.containers);
    await h2.sandboxAsked;
    h2.finishSandbox();
    await made2;
    expect(existsSync(join(h2.rootDir, 'pods', host.metadata.uid))).toBe(false);
  });
});

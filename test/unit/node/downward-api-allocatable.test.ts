// A container that sets no limits reads the node's allocatable CPU, memory and ephemeral storage
// through the downward API, and the env (kuberuntime) and a downwardAPI volume (node) read the same
// figure, the one the Node reports (k8s/node-allocatable.ts): the kubelet's machine CPU count,
// memory less 100Mi, and the root dir's file system less 10%.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EnvVar, ResourceFieldSelector } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { collectNodeInfo } from '../../../src/node/node-info.js';
import { nodeAllocatable, nodeCpuCount } from '../../../src/k8s/node-allocatable.js';
import { buildContainerConfig } from '../../../src/kuberuntime/container-config.js';
import { containerEnv, EnvError } from '../../../src/kuberuntime/env.js';
import { prepareVolumes, VolumeError } from '../../../src/node/volumes.js';
import { FakePodObjects } from '../../support/fake-pod-objects.js';
import { useTmpDir } from '../../support/tmp.js';
import { container, pod } from '../kuberuntime/fixtures.js';

const tmp = useTmpDir('downward-allocatable');
const MiB = 2 ** 20;

const refs: Record<string, ResourceFieldSelector> = {
  CPU: { resource: 'limits.cpu' },
  CPU_M: { resource: 'limits.cpu', divisor: '1m' },
  MEM: { resource: 'limits.memory' },
  MEM_MI: { resource: 'limits.memory', divisor: '1Mi' },
  EPH: { resource: 'limits.ephemeral-storage' },
};

let serial = 0;
function limitlessPod() {
  const env: EnvVar[] = Object.entries(refs).map(([name, ref]) => ({ name, valueFrom: { resourceFieldRef: ref } }));
  const c = container({ env, volumeMounts: [{ name: 'limits', mountPath: '/limits' }] });
  const p = pod({
    spec: {
      containers: [c],
      volumes: [
        {
          name: 'limits',
          downwardAPI: {
            items: Object.entries(refs).map(([name, ref]) => ({
              path: name,
              resourceFieldRef: { containerName: 'app', ...ref },
            })),
          },
        },
      ],
    },
  });
  p.metadata.uid = `allocatable${String(serial++).padStart(4, '0')}`.padEnd(32, '0');
  return { p, c };
}

const rootDir = path.join(tmp, 'root');
fs.mkdirSync(rootDir, { recursive: true });

/** What the env and the volume hold, started as the pod runtime starts a container. */
async function readBoth(podObjects: FakePodObjects | undefined) {
  const { p, c } = limitlessPod();
  const mounts = await prepareVolumes(p, c, { rootDir, podObjects });
  const config = buildContainerConfig(p, c, {
    restartCount: 0,
    imageRef: 'sha256:abc',
    type: 'container',
    nodeName: 'node1',
    hostIP: '192.0.2.10',
    podIPs: [],
    mounts,
    nodeMemoryCapacityBytes: os.totalmem(),
    nodeAllocatable: nodeAllocatable(os.totalmem(), rootDir),
  });
  const env = Object.fromEntries(
    Object.keys(refs).map((k) => [k, (config.envs ?? []).find((e) => e.key === k)?.value]),
  );
  const volume = Object.fromEntries(
    Object.keys(refs).map((k) => [k, fs.readFileSync(path.join(mounts[0]!.hostPath, k), 'utf8')]),
  );
  return { env, volume };
}

describe('the downward API falls back to the node allocatable', () => {
  const cpus = os.cpus().length;
  const memory = os.totalmem() - 100 * MiB;
  // The root dir's file system as coreutils reads it, less the kubelet's nodefs.available (10%).
  const [blocks, blockSize] = execFileSync('stat', ['-f', '-c', '%b %S', rootDir], { encoding: 'utf8' })
    .trim()
    .split(' ')
    .map(Number);
  const ephemeral = Math.floor(blocks! * blockSize! * 0.9);
  const expected = {
    CPU: String(cpus),
    CPU_M: String(cpus * 1000),
    MEM: String(memory),
    MEM_MI: String(Math.ceil(memory / MiB)),
    EPH: String(ephemeral),
  };

  it('env and a downwardAPI volume read the same figures (standalone: no API objects)', async () => {
    const { env, volume } = await readBoth(undefined);
    expect(env).toEqual(expected);
    expect(volume).toEqual(expected);
  });

  it('env and a downwardAPI volume kept current by the volume manager read the same figures', async () => {
    const { env, volume } = await readBoth(new FakePodObjects());
    expect(env).toEqual(expected);
    expect(volume).toEqual(expected);
  });

  it('is what the Node reports as allocatable', () => {
    const reported = collectNodeInfo({
      nodeName: 'node1',
      nodeIP: '10.0.0.1',
      runtimeVersion: '',
      kubeletVersion: '',
      runtimeReady: () => true,
      rootDir,
    }).allocatable();
    expect(reported.cpu).toBe(String(cpus));
    expect(reported.memory).toBe(`${Math.floor(memory / 1024)}Ki`);
    expect(reported['ephemeral-storage']).toBe(String(ephemeral));
    expect(ephemeral).toBeGreaterThan(0);
    expect(nodeAllocatable(undefined, rootDir)).toEqual({
      cpuMillis: cpus * 1000,
      memoryBytes: memory,
      ephemeralStorageBytes: ephemeral,
    });
  });

  // The kubelet counts the machine's CPUs (cadvisor's NumCores), whatever the agent's own affinity.
  it.skipIf(cpus < 2 || !fs.existsSync('/usr/bin/taskset'))(
    'counts every CPU of the machine, not those the agent may run on',
    () => {
      const script = `import { nodeCpuCount } from ${JSON.stringify(path.resolve('src/k8s/node-allocatable.ts'))}; import { availableParallelism } from 'node:os'; console.log(JSON.stringify([nodeCpuCount(), availableParallelism()]));`;
      const out = execFileSync(
        '/usr/bin/taskset',
        ['-c', '0', process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
        { encoding: 'utf8' },
      );
      expect(JSON.parse(out)).toEqual([cpus, 1]);
      expect(nodeCpuCount()).toBe(cpus);
    },
  );

  it('a resource neither supports is refused by both in the same words', async () => {
    const ref = { containerName: 'app', resource: 'limits.nvidia.com/gpu' };
    const c = container({ env: [{ name: 'GPU', valueFrom: { resourceFieldRef: ref } }] });
    const p = pod({
      spec: {
        containers: [c],
        volumes: [{ name: 'gpu', downwardAPI: { items: [{ path: 'gpu', resourceFieldRef: ref }] } }],
      },
    });
    const words = 'unsupported container resource : limits.nvidia.com/gpu';
    expect(() => containerEnv(p, c, { hostIP: '192.0.2.10', podIPs: [], nodeAllocatable: nodeAllocatable() })).toThrow(
      new EnvError(words),
    );
    const mounting = prepareVolumes(
      p,
      { ...c, volumeMounts: [{ name: 'gpu', mountPath: '/gpu' }] },
      { rootDir: path.join(tmp, 'root') },
    );
    await expect(mounting).rejects.toBeInstanceOf(VolumeError);
    await expect(mounting).rejects.toThrow(words);
  });
});

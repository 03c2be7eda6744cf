// In-place pod resize (issue 32's measure): a resize request through the API server (a strategic
// merge PATCH of pods/<name>/resize, as `kubectl patch --subresource resize` sends it) → the new cpu
// quota in the container's cgroup, timed from outside the agent (from the server's write of the
// pod, its MODIFIED event, to the first read of the cgroup file on the host that shows it), against
// UpdateContainerResources called directly on the same container (from the call to the same read),
// in turn, on one private containerd. p50 of each and their ratio.
//   npx tsx bench/resize.ts, or the `resize` section of npm run bench
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { cleanupStaleContainerds, startContainerd } from '../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../dev/images.js';
import { connectRuntime } from '../src/cri/cri-client.js';
import { startFakeApiServer, type FakeApiServer } from '../test/support/fake-apiserver/index.js';
import { startAgent } from '../test/support/agent.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { waitFor } from '../test/support/wait.js';
import { benchAgentOptions, makeBenchDirs } from './bench-node.js';
import { BENCH_NODE } from './pods.js';
import { percentile, runIfMain } from './report.js';
import { startRuntimePoller } from './user-view.js';

const RESIZES = Number(process.env.BENCH_RESIZES ?? 10);

export interface ResizeBenchResult {
  /** Per resize: ms from the server's write to the new quota in the cgroup. */
  resizeMs: number[];
  /** Per direct call: ms from UpdateContainerResources to the new quota in the cgroup. */
  directMs: number[];
}

const POD = 'resize-bench';

function boundPod(): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: POD, namespace: 'default' },
    spec: {
      nodeName: BENCH_NODE,
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: 'main',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sleep', '86400'],
          resources: { requests: { cpu: '100m', memory: '32Mi' }, limits: { cpu: '200m', memory: '64Mi' } },
        },
      ],
    },
  };
}

function patchResize(api: FakeApiServer, token: string, cpuLimit: string): Promise<void> {
  const body = JSON.stringify({ spec: { containers: [{ name: 'main', resources: { limits: { cpu: cpuLimit } } }] } });
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(`/api/v1/namespaces/default/pods/${POD}/resize`, api.url),
      {
        method: 'PATCH',
        ca: api.caPem,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/strategic-merge-patch+json' },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`resize: ${res.statusCode}`))));
      },
    );
    req.on('timeout', () => req.destroy(new Error('resize timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

export async function runResizeBench(): Promise<ResizeBenchResult> {
  await cleanupStaleContainerds();
  const dir = makeTmpDir('bench-resize');
  const cd = await startContainerd({ name: 'bench-resize' });
  fs.mkdirSync(path.join(dir, 'api'), { recursive: true });
  const api = await startFakeApiServer({ dir: path.join(dir, 'api') });
  const cri = await connectRuntime(cd.endpoint);
  try {
    await importTestImages(cd);
    const kubeconfig = api.writeKubeconfig(path.join(dir, 'node.kubeconfig'), `system:node:${BENCH_NODE}`, [
      'system:nodes',
    ]);
    const poller = await startRuntimePoller(cd.endpoint, { intervalMs: 5 });
    const agent = startAgent(
      benchAgentOptions(cd.endpoint, makeBenchDirs(dir), { extraArgs: ['--v=0', `--kubeconfig=${kubeconfig}`] }),
    );
    try {
      await agent.waitForLog((r) => r.msg === 'API pods listed', 'the API pods listed', 60_000);
      api.seedObject('pods', boundPod() as never);
      await poller.running(POD);
      const status = () => api.pod('default', POD)?.status?.containerStatuses?.[0];
      await waitFor(() => status()?.resources, { timeoutMs: 60_000, what: 'the container resources in status' });
      const id = status()!.containerID!.replace(/^containerd:\/\//, '');
      // The container's cpu cgroup, as /proc/self/cgroup names it inside (cgroup v1 has no cgroup namespace here).
      const self = (await cri.runtime.execSync(id, ['cat', '/proc/self/cgroup'], 10)).stdout.toString();
      const rel = self
        .split('\n')
        .map((l) => l.split(':'))
        .find((f) => f[1]?.split(',').includes('cpu'))![2]!;
      const quotaFile = path.join('/sys/fs/cgroup/cpu', rel, 'cpu.cfs_quota_us');
      const seen = (quota: number): Promise<number> =>
        waitFor(() => (Number(fs.readFileSync(quotaFile, 'utf8')) === quota ? performance.now() : undefined), {
          timeoutMs: 30_000,
          intervalMs: 1,
          what: `quota ${quota}`,
        });
      const token = 'bench-resizer';
      api.addToken(token, 'bench-admin', ['system:masters']);
      const resizeMs: number[] = [];
      const directMs: number[] = [];
      const current = { cpuShares: 102, cpuPeriod: 100000, memoryLimitInBytes: 64 * 1024 * 1024, oomScoreAdj: 0 };
      for (let i = 0; i < RESIZES; i++) {
        // In turn, so the machine's noise falls on both sides alike; each leaves the quota changed.
        const milli = i % 2 === 0 ? 300 : 200;
        let writtenAt: number | undefined;
        const unsubscribe = api.store.subscribe((ev) => {
          const o = ev.object as unknown as Pod;
          if (
            ev.type === 'MODIFIED' &&
            o.metadata?.name === POD &&
            o.spec?.containers[0]?.resources?.limits?.cpu === `${milli}m`
          )
            writtenAt ??= performance.now();
        });
        try {
          await patchResize(api, token, `${milli}m`);
          const at = await seen(milli * 100);
          if (writtenAt === undefined) throw new Error('no MODIFIED event for the resize');
          resizeMs.push(at - writtenAt);
        } finally {
          unsubscribe();
        }
        // The direct call sets a quota of its own and puts the pod's back after, off the clock.
        // Below the pod cgroup's quota: cgroup v1 refuses a child quota above its parent's.
        const direct = milli * 100 - 5000;
        const t0 = performance.now();
        await cri.runtime.updateContainerResources(id, { ...current, cpuQuota: direct });
        directMs.push((await seen(direct)) - t0);
        await cri.runtime.updateContainerResources(id, { ...current, cpuQuota: milli * 100 });
        await new Promise((r) => setTimeout(r, 200));
      }
      return { resizeMs, directMs };
    } finally {
      await agent.kill('SIGKILL');
      await poller.stop();
    }
  } finally {
    cri.runtime.close();
    await api.stop();
    await cd.stop();
    removeTmpDir(dir);
  }
}

export function printResizeBench(r: ResizeBenchResult): void {
  const resize = percentile(r.resizeMs, 50);
  const direct = percentile(r.directMs, 50);
  console.log(
    `resize request → new cpu quota in the container's cgroup, p50 of ${r.resizeMs.length}: ${resize.toFixed(1)} ms ` +
      `(p90 ${percentile(r.resizeMs, 90).toFixed(1)}); UpdateContainerResources called directly: ${direct.toFixed(1)} ms ` +
      `(p90 ${percentile(r.directMs, 90).toFixed(1)}); ratio ${(resize / direct).toFixed(2)}×`,
  );
}

runIfMain(import.meta.url, runResizeBench, printResizeBench);

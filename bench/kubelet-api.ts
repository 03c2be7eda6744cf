// The kubelet API, measured against baselines in the same run on one private containerd:
// - `kubectl logs` of a 10 MB log (through the fake API server and the kubelet API), and a direct
//   GET /containerLogs, against `cat` of the same CRI log file;
// - `kubectl exec -- true` round trip (API server, kubelet API, the runtime's streaming server,
//   SPDY) against the CRI ExecSync call of the same command;
// - the agent's idle CPU and RSS with 30 pods, with the kubelet API on and off.
//   npx tsx bench/kubelet-api.ts   (BENCH_IDLE_SECONDS, BENCH_API_EXEC_RUNS)
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupStaleContainerds, startContainerd } from '../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../dev/images.js';
import { connectRuntime } from '../src/cri/cri-client.js';
import { ContainerState } from '../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod } from '../src/kuberuntime/runtime-pods.js';
import { Kubectl, KUBECTL } from '../test/e2e/fake-apiserver/kubectl.js';
import { startAgent, type RunningAgent } from '../test/support/agent.js';
import { startFakeApiServer } from '../test/support/fake-apiserver/index.js';
import { request } from 'node:https';
import { freePorts } from '../test/support/ports.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { waitFor } from '../test/support/wait.js';
import { benchPodManifest, BENCH_NODE, writeAtomically } from './pods.js';
import { benchAgentOptions } from './bench-node.js';
import { idleCpuPercent, rssMiB } from './proc.js';
import { percentile } from './report.js';

const LOG_RUNS = Number(process.env.BENCH_API_LOG_RUNS ?? 5);
const EXEC_RUNS = Number(process.env.BENCH_API_EXEC_RUNS ?? 15);
const IDLE_PODS = 30;
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const SETTLE_MS = 20_000;

export interface KubeletApiBenchResult {
  logBytes: number;
  logFileBytes: number;
  catMs: number;
  kubectlLogsMs: number;
  directLogsMs: number;
  execSyncMs: number;
  kubectlExecMs: number;
  /** `kubectl get --raw /version`: kubectl's own start and one API round trip, the floor of any kubectl command. */
  kubectlFloorMs: number;
  idle: { withServer: { cpu: number; rss: number }; withoutServer: { cpu: number; rss: number } };
}

const read = (p: string): string => fs.readFileSync(p, 'utf8');

/** Runs a command, counts its stdout bytes, returns ms. */
function timed(
  cmd: string,
  args: string[],
  env?: NodeJS.ProcessEnv,
): Promise<{ ms: number; bytes: number; code: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'], env: env ?? process.env });
    let bytes = 0;
    child.stdout.on('data', (c: Buffer) => (bytes += c.length));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: performance.now() - t0, bytes, code: code ?? -1 }));
  });
}

/** GET over TLS with a client certificate, counting the body's bytes (nothing kept). */
function countBytes(url: string, cert: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { cert, key, rejectUnauthorized: false, agent: false }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => resolve(n));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

export async function runKubeletApiBench(): Promise<KubeletApiBenchResult> {
  await cleanupStaleContainerds();
  const dir = makeTmpDir('bench-kapi');
  const cd = await startContainerd({ name: 'benchkapi' });
  const api = await startFakeApiServer({ dir });
  let agent: RunningAgent | undefined;
  try {
    await importTestImages(cd);
    const cri = await connectRuntime(cd.endpoint);
    const manifests = path.join(dir, 'manifests');
    const rootDir = path.join(dir, 'root');
    const podLogsDir = path.join(dir, 'logs', 'pods');
    fs.mkdirSync(manifests, { recursive: true });
    const [port] = await freePorts(1);
    const kubeconfig = api.writeKubeconfig(path.join(dir, 'kubelet.conf'), `system:node:${BENCH_NODE}`, [
      'system:nodes',
    ]);
    const kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(dir, 'admin.kubeconfig')), dir);
    const config = path.join(dir, 'config.yaml');
    // Logs are not rotated during the run: the 10 MB log stays one file.
    fs.writeFileSync(
      config,
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${podLogsDir}\ncontainerLogMaxSize: 100Mi\nauthentication:\n  x509: {clientCAFile: ${api.caFile}}\n`,
    );
    const launch = (server: boolean): RunningAgent =>
      startAgent({
        ...benchAgentOptions(cd.endpoint, { manifests, rootDir, podLogsDir, configFile: config }),
        ...(server ? { kubeletPort: port } : {}),
        extraArgs: [
          '--v=0',
          `--kubeconfig=${kubeconfig}`,
          '--node-ip=127.0.0.1',
          `--cert-dir=${path.join(rootDir, 'pki')}`,
        ],
      });
    agent = launch(true);

    // 10 MB of base64 lines (76 characters), then the container idles.
    writeAtomically(
      manifests,
      'logger.yaml',
      `apiVersion: v1\nkind: Pod\nmetadata: {name: logger, namespace: default}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n  containers:\n  - name: main\n    image: ${TEST_IMAGES.busybox}\n    command: ["sh", "-c", "head -c 7500000 /dev/urandom | base64; echo done-logging; exec sleep 3600"]\n`,
    );
    const logDir = await waitFor(() => fs.readdirSync(podLogsDir).find((d) => d.startsWith('default_logger-')), {
      timeoutMs: 60_000,
      what: 'the logger log dir',
    });
    const logFile = path.join(podLogsDir, logDir, 'main', '0.log');
    await waitFor(() => fs.existsSync(logFile) && read(logFile).includes('done-logging'), {
      timeoutMs: 120_000,
      intervalMs: 500,
      what: 'the 10 MB log written',
    });
    await waitFor(() => api.object('pods', 'default', `logger-${BENCH_NODE}`), {
      timeoutMs: 60_000,
      what: 'the mirror pod',
    });
    const logFileBytes = fs.statSync(logFile).size;

    // kubectl as the cluster's admin, timed from exec to exit.
    const timedKubectl = (args: string[]): ReturnType<typeof timed> =>
      timed(
        KUBECTL,
        ['--kubeconfig', path.join(dir, 'admin.kubeconfig'), '--cache-dir', path.join(dir, 'kube-cache'), ...args],
        { ...process.env, HOME: dir },
      );
    const cat: number[] = [];
    const viaKubectl: number[] = [];
    const direct: number[] = [];
    let logBytes = 0;
    const client = api.kubeletClientCert;
    for (let i = 0; i < LOG_RUNS; i++) {
      cat.push((await timed('cat', [logFile])).ms);
      const k = await timedKubectl(['logs', `logger-${BENCH_NODE}`]);
      if (k.code !== 0) throw new Error('kubectl logs failed');
      viaKubectl.push(k.ms);
      logBytes = k.bytes;
      const t0 = performance.now();
      const got = await countBytes(
        `https://127.0.0.1:${port}/containerLogs/default/logger-${BENCH_NODE}/main`,
        client.certPem,
        client.keyPem,
      );
      direct.push(performance.now() - t0);
      if (got !== logBytes) throw new Error(`direct GET returned ${got} bytes, kubectl ${logBytes}`);
    }

    // exec round trips, the CRI call first as the baseline.
    const pod = [...(await listRuntimePods(cri.runtime)).values()].find((p) => p.name === `logger-${BENCH_NODE}`)!;
    const full = await readRuntimePod(cri.runtime, pod.uid);
    const containerId = full!.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING)!.id;
    const execSync: number[] = [];
    const kubectlExec: number[] = [];
    const kubectlFloor: number[] = [];
    await kubectl.ok(['exec', `logger-${BENCH_NODE}`, '--', 'true']);
    for (let i = 0; i < EXEC_RUNS; i++) {
      const t0 = performance.now();
      await cri.runtime.execSync(containerId, ['true'], 10);
      execSync.push(performance.now() - t0);
      const k = await timedKubectl(['exec', `logger-${BENCH_NODE}`, '--', 'true']);
      if (k.code !== 0) throw new Error('kubectl exec failed');
      kubectlExec.push(k.ms);
      kubectlFloor.push((await timedKubectl(['get', '--raw', '/version'])).ms);
    }
    fs.rmSync(path.join(manifests, 'logger.yaml'));

    // Idle: 30 pods, a fresh agent with the kubelet API on, then one with it off (both adopt the pods).
    for (let i = 0; i < IDLE_PODS; i++) writeAtomically(manifests, `idle-${i}.yaml`, benchPodManifest(`idle-${i}`));
    await waitFor(
      () =>
        agent!.records().filter((r) => r.msg === 'Started container' && String(r.pod).includes('idle-')).length >=
        IDLE_PODS,
      { timeoutMs: 300_000, intervalMs: 500, what: 'idle pods started' },
    );
    const measure = async (server: boolean): Promise<{ cpu: number; rss: number }> => {
      await agent?.kill('SIGTERM');
      agent = launch(server);
      await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'agent ready', 60_000);
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      const cpu = await idleCpuPercent(agent.proc.pid!, IDLE_SECONDS, read);
      return { cpu, rss: rssMiB(agent.proc.pid!, read) };
    };
    const withServer = await measure(true);
    const withoutServer = await measure(false);
    await agent?.kill('SIGTERM');
    agent = undefined;
    for (let i = 0; i < IDLE_PODS; i++) fs.rmSync(path.join(manifests, `idle-${i}.yaml`));
    cri.runtime.close();
    return {
      logBytes,
      logFileBytes,
      catMs: percentile(cat, 50),
      kubectlLogsMs: percentile(viaKubectl, 50),
      directLogsMs: percentile(direct, 50),
      execSyncMs: percentile(execSync, 50),
      kubectlExecMs: percentile(kubectlExec, 50),
      kubectlFloorMs: percentile(kubectlFloor, 50),
      idle: { withServer, withoutServer },
    };
  } finally {
    await agent?.kill('SIGKILL');
    await api.dispose();
    await cd.stop();
    removeTmpDir(dir);
  }
}

export function printKubeletApiBench(r: KubeletApiBenchResult): void {
  const mbps = (bytes: number, ms: number): string => `${(bytes / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;
  console.log(
    `log: ${(r.logBytes / 1e6).toFixed(1)} MB of content in a ${(r.logFileBytes / 1e6).toFixed(1)} MB CRI file (p50 of ${LOG_RUNS})`,
  );
  console.log(`  cat of the file:                    ${r.catMs.toFixed(0)} ms (${mbps(r.logFileBytes, r.catMs)})`);
  console.log(
    `  GET /containerLogs on the kubelet API: ${r.directLogsMs.toFixed(0)} ms (${mbps(r.logBytes, r.directLogsMs)}), ratio ${(r.directLogsMs / r.catMs).toFixed(1)}× cat`,
  );
  console.log(
    `  kubectl logs (API server + kubelet API): ${r.kubectlLogsMs.toFixed(0)} ms (${mbps(r.logBytes, r.kubectlLogsMs)}), ratio ${(r.kubectlLogsMs / r.catMs).toFixed(1)}× cat`,
  );
  console.log(
    `exec of \`true\` (p50 of ${EXEC_RUNS}): CRI ExecSync ${r.execSyncMs.toFixed(0)} ms, kubectl exec ${r.kubectlExecMs.toFixed(0)} ms (ratio ${(r.kubectlExecMs / r.execSyncMs).toFixed(1)}); ` +
      `kubectl's own floor (get --raw /version) ${r.kubectlFloorMs.toFixed(0)} ms, so the exec path adds ${(r.kubectlExecMs - r.kubectlFloorMs).toFixed(0)} ms`,
  );
  const w = r.idle.withServer;
  const wo = r.idle.withoutServer;
  console.log(
    `idle with ${IDLE_PODS} pods over ${IDLE_SECONDS}s: kubelet API on: CPU ${w.cpu.toFixed(2)}%, RSS ${w.rss.toFixed(1)} MiB; off: CPU ${wo.cpu.toFixed(2)}%, RSS ${wo.rss.toFixed(1)} MiB`,
  );
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) {
  runKubeletApiBench()
    .then((r) => {
      printKubeletApiBench(r);
      process.exit(0);
    })
    .catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}

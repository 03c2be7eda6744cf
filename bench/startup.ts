// Start-up: from the exec of the agent to its first sandbox, with four manifests present and none
// of their pods in the runtime (what `systemctl restart kubelet` waits on after kubeadm wrote the
// control plane's manifests), against `bootlet --version` (the executable's own floor) and the
// bare Node it carries. The agent's own log says where the time goes.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { startContainerd } from '../dev/containerd.js';
import { importTestImages } from '../dev/images.js';
import { connectRuntime } from '../src/cri/cri-client.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { BOOTLET_EXE, startAgent } from '../test/support/agent.js';
import { bareStartPod, benchPodManifest, BENCH_NODE } from './pods.js';
import { benchAgentOptions } from './bench-node.js';
import { percentile } from './report.js';
import { startRuntimePoller } from './user-view.js';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const MANIFESTS = 4;
const execFileP = promisify(execFile);

export interface StartupVariant {
  what: string;
  /** exec → first sandbox listed, ms per run. */
  firstSandbox: number[];
  /** exec → the agent's first log line, its "Manifests read" line, the first manifest accepted. */
  firstLog: number[];
  manifestsRead: number[];
  firstAccepted: number[];
}

export interface StartupResult {
  variants: StartupVariant[];
  /** `bootlet --version`, exec → exit. */
  version: number[];
  /** The carried Node itself: `node -e 0`, exec → exit. */
  bareNode: number[];
  nodePath: string;
  /** A bare RunPodSandbox's own duration (call → return), p50: what the first sandbox adds after the call. */
  runPodSandboxMs: number;
}

async function timeExec(cmd: string, args: string[], runs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await execFileP(cmd, args);
    out.push(performance.now() - t0);
  }
  return out;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function runStartupBench(): Promise<StartupResult> {
  const dir = makeTmpDir('bench-startup');
  const cd = await startContainerd({ name: 'bench-startup' });
  try {
    await importTestImages(cd);
    const cri = await connectRuntime(cd.endpoint);
    const poller = await startRuntimePoller(cd.endpoint, { intervalMs: 2, sandboxes: true });
    const removeAll = async (): Promise<void> => {
      for (const s of await cri.runtime.listPodSandbox({})) {
        await cri.runtime.stopPodSandbox(s.id);
        await cri.runtime.removePodSandbox(s.id);
      }
    };
    // The runtime's own part of the first sandbox, and a warm image.
    const sandboxMs: number[] = [];
    for (let i = 0; i < 3; i++)
      sandboxMs.push((await bareStartPod(cri.runtime, `startwarm${i}-${BENCH_NODE}`)).sandboxMs);
    await removeAll();

    const podLogsDir = path.join(dir, 'logs', 'pods');
    const rootDir = path.join(dir, 'root');
    const manifests = path.join(dir, 'manifests');
    fs.mkdirSync(manifests, { recursive: true });
    const variants: StartupVariant[] = [];
    for (const kubeletApi of [false, true]) {
      const v: StartupVariant = {
        what: kubeletApi ? 'kubelet API on (self-signed serving certificate)' : 'kubelet API off',
        firstSandbox: [],
        firstLog: [],
        manifestsRead: [],
        firstAccepted: [],
      };
      for (let run = 0; run < RUNS; run++) {
        const prefix = `st${kubeletApi ? 'a' : 'o'}${run}x`;
        for (const f of fs.readdirSync(manifests)) fs.rmSync(path.join(manifests, f));
        for (let k = 0; k < MANIFESTS; k++)
          fs.writeFileSync(path.join(manifests, `${prefix}${k}.yaml`), benchPodManifest(`${prefix}${k}`));
        const port = kubeletApi ? await freePort() : undefined;
        const wall0 = Date.now();
        const t0 = performance.now();
        const agent = startAgent(
          benchAgentOptions(
            cd.endpoint,
            { manifests, rootDir, podLogsDir },
            port === undefined ? {} : { kubeletPort: port },
          ),
        );
        try {
          v.firstSandbox.push((await poller.firstSandboxSince(prefix, t0, 60_000)) - t0);
          const accepted = await agent.waitForLog(
            (r) => r.msg === 'Static pod manifest accepted',
            'a manifest accepted',
          );
          const read = await agent.waitForLog(
            (r) => r.msg === 'Manifests read, adopting running pods',
            'manifests read',
          );
          const first = agent.records()[0];
          v.firstLog.push(Number(first?.ts) * 1000 - wall0);
          v.manifestsRead.push(Number(read.ts) * 1000 - wall0);
          v.firstAccepted.push(Number(accepted.ts) * 1000 - wall0);
        } finally {
          await agent.kill('SIGTERM');
        }
        await removeAll();
      }
      variants.push(v);
    }
    await poller.stop();
    cri.runtime.close();
    const nodePath = fs.realpathSync(
      path.join(path.dirname(BOOTLET_EXE), '..', 'node_modules', `node-linux-${process.arch}`, 'bin', 'node'),
    );
    return {
      variants,
      version: await timeExec(BOOTLET_EXE, ['--version'], 10),
      bareNode: await timeExec(nodePath, ['-e', '0'], 10),
      nodePath,
      runPodSandboxMs: percentile(sandboxMs, 50),
    };
  } finally {
    await cd.stop();
    removeTmpDir(dir);
  }
}

export function printStartupBench(r: StartupResult): void {
  const p50 = (v: number[]): string => `${percentile(v, 50).toFixed(0)} ms`;
  console.log(
    `bootlet --version (exec → exit, p50 of ${r.version.length}): ${p50(r.version)}; the carried Node alone (node -e 0): ${p50(r.bareNode)}`,
  );
  for (const v of r.variants) {
    console.log(
      `${v.what}: exec → first sandbox listed, p50 of ${v.firstSandbox.length}: ${p50(v.firstSandbox)} (${(percentile(v.firstSandbox, 50) / percentile(r.version, 50)).toFixed(1)}× --version; ` +
        `runs ${v.firstSandbox.map((t) => t.toFixed(0)).join(', ')})`,
    );
    console.log(
      `  exec → first log line ${p50(v.firstLog)}, → manifests read ${p50(v.manifestsRead)}, → first manifest accepted ${p50(v.firstAccepted)}, ` +
        `→ RunPodSandbox returned ${p50(v.firstSandbox)} (a bare RunPodSandbox takes ${r.runPodSandboxMs.toFixed(0)} ms)`,
    );
  }
}

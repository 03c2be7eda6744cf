// The node a bench section runs its agent on: a private containerd with the test images, a CRI
// connection to it, the agent's directories and a kubelet config naming its pod log directory.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../dev/containerd.js';
import { importTestImages } from '../dev/images.js';
import { connectRuntime, type RuntimeConnection } from '../src/cri/cri-client.js';
import type { AgentOptions } from '../test/support/agent.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';
import { BENCH_NODE } from './pods.js';

/** A bench agent's directories under one, and a kubelet config naming its pod log directory. */
export interface BenchDirs {
  readonly podLogsDir: string;
  readonly rootDir: string;
  readonly manifests: string;
  readonly configFile: string;
}

export interface BenchNode extends BenchDirs {
  readonly dir: string;
  readonly cd: PrivateContainerd;
  readonly cri: RuntimeConnection;
  /** Stops containerd and removes the directory (the agent must be gone). */
  close(): Promise<void>;
}

export async function startBenchNode(name: string): Promise<BenchNode> {
  await cleanupStaleContainerds();
  const dir = makeTmpDir(name);
  const cd = await startContainerd({ name });
  try {
    await importTestImages(cd);
    const cri = await connectRuntime(cd.endpoint);
    return {
      dir,
      cd,
      cri,
      ...makeBenchDirs(dir),
      async close() {
        cri.runtime.close();
        await cd.stop();
        removeTmpDir(dir);
      },
    };
  } catch (err) {
    await cd.stop();
    removeTmpDir(dir);
    throw err;
  }
}

/** Makes the manifest directory and writes the kubelet config; the agent makes the others. */
export function makeBenchDirs(dir: string): BenchDirs {
  const podLogsDir = path.join(dir, 'logs', 'pods');
  const manifests = path.join(dir, 'manifests');
  fs.mkdirSync(manifests, { recursive: true });
  const configFile = path.join(dir, 'kubelet-config.yaml');
  fs.writeFileSync(
    configFile,
    `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${podLogsDir}\n`,
  );
  return { podLogsDir, rootDir: path.join(dir, 'root'), manifests, configFile };
}

/**
 * The bench's agent on `dirs` (a config file of its own, or none), against containerd at
 * `endpoint`: node BENCH_NODE, logging at --v=0 unless `extra` gives other arguments.
 */
export function benchAgentOptions(
  endpoint: string,
  dirs: Omit<BenchDirs, 'configFile'> & { readonly configFile?: string },
  extra: Partial<AgentOptions> = {},
): AgentOptions {
  const { manifests, rootDir, podLogsDir, configFile } = dirs;
  return { manifests, endpoint, rootDir, podLogsDir, nodeName: BENCH_NODE, configFile, extraArgs: ['--v=0'], ...extra };
}

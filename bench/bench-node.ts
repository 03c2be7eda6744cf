// The node a bench section runs its agent on: a private containerd with the test images, a CRI
// connection to it, the agent's directories and a kubelet config naming its pod log directory.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cleanupStaleContainerds, startContainerd, type PrivateContainerd } from '../dev/containerd.js';
import { importTestImages } from '../dev/images.js';
import { connectRuntime, type RuntimeConnection } from '../src/cri/cri-client.js';
import { makeTmpDir, removeTmpDir } from '../test/support/tmp.js';

export interface BenchNode {
  readonly dir: string;
  readonly cd: PrivateContainerd;
  readonly cri: RuntimeConnection;
  readonly podLogsDir: string;
  readonly rootDir: string;
  readonly manifests: string;
  readonly configFile: string;
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
    const podLogsDir = path.join(dir, 'logs', 'pods');
    const manifests = path.join(dir, 'manifests');
    fs.mkdirSync(manifests, { recursive: true });
    const configFile = path.join(dir, 'kubelet-config.yaml');
    fs.writeFileSync(
      configFile,
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${podLogsDir}\n`,
    );
    return {
      dir,
      cd,
      cri,
      podLogsDir,
      rootDir: path.join(dir, 'root'),
      manifests,
      configFile,
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

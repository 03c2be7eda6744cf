// What every end-to-end test of the packaged agent stands on: a private containerd with the test
// images, a CRI client to look at what runs, a manifest directory, and the agent's directories.
// Registers its own beforeAll/afterAll; cleanup runs even when a test fails.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import {
  cleanupStaleContainerds,
  startContainerd,
  type PrivateContainerd,
  type StartContainerdOptions,
} from '../../../dev/containerd.js';
import { importTestImages } from '../../../dev/images.js';
import { connectRuntime, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startAgent, type AgentOptions, type RunningAgent } from '../../support/agent.js';
import { useTmpDir } from '../../support/tmp.js';

export interface AgentHarness {
  readonly node: string;
  /** The test file's temporary directory (removed after the file). */
  readonly dir: string;
  readonly manifests: string;
  readonly rootDir: string;
  readonly podLogsDir: string;
  readonly cd: () => PrivateContainerd;
  readonly cri: () => RuntimeConnection;
  readonly agent: () => RunningAgent;
  /** (Re)starts the agent; the previous one, if any, must have been stopped. */
  launch(extra?: Partial<AgentOptions>): RunningAgent;
  /** Writes a manifest as careful tooling does: beside it under a dot-name, then renamed into place. */
  write(file: string, content: string): void;
  remove(file: string): void;
  /** The runtime pods of the static pod `name` (any UID), full state. */
  pods(name: string): Promise<RuntimePod[]>;
  /** The runtime pods named exactly `name` in kube-system (an API pod's, any UID), full state. */
  namedPods(name: string): Promise<RuntimePod[]>;
}

export function useAgentHarness(
  name: string,
  node: string,
  agentDefaults: Partial<AgentOptions> = {},
  /** Read when the file's tests start (a hook registered earlier may have set up what it needs). */
  containerdOptions: () => StartContainerdOptions = () => ({}),
): AgentHarness {
  const tmp = useTmpDir(`agent-${name}`);
  const manifests = path.join(tmp, 'manifests');
  const rootDir = path.join(tmp, 'root');
  const podLogsDir = path.join(tmp, 'logs', 'pods');
  const configFile = path.join(tmp, 'kubelet-config.yaml');
  let cd: PrivateContainerd | undefined;
  let cri: RuntimeConnection | undefined;
  let agent: RunningAgent | undefined;
  const must = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`${what} is not started`);
    return v;
  };

  beforeAll(async () => {
    await cleanupStaleContainerds();
    cd = await startContainerd({ name, ...containerdOptions() });
    await importTestImages(cd);
    cri = await connectRuntime(cd.endpoint);
    fs.mkdirSync(manifests, { recursive: true });
    fs.writeFileSync(
      configFile,
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${podLogsDir}\n`,
    );
  });

  // A failed test shows what the agent and containerd said last: CI keeps only the runner's output.
  afterEach((ctx) => {
    if (ctx.task.result?.state !== 'fail' && !process.env.SHOW_AGENT_LOG) return;
    if (agent) console.error(`[${name}] agent log (last 80 lines):\n${agent.lines.slice(-80).join('\n')}`);
    if (cd) console.error(`[${name}] containerd log (last 40 lines):\n${cd.logTail(40)}`);
  });

  afterAll(async () => {
    await agent?.kill('SIGKILL');
    cri?.runtime.close();
    await cd?.stop();
  });

  const h: AgentHarness = {
    node,
    dir: tmp,
    manifests,
    rootDir,
    podLogsDir,
    cd: () => must(cd, 'containerd'),
    cri: () => must(cri, 'the CRI client'),
    agent: () => must(agent, 'the agent'),
    launch(extra = {}) {
      agent = startAgent({
        manifests,
        endpoint: must(cd, 'containerd').endpoint,
        rootDir,
        podLogsDir,
        nodeName: node,
        configFile,
        ...agentDefaults,
        ...extra,
      });
      return agent;
    },
    write(file, content) {
      const tmpFile = path.join(manifests, `.${file}.tmp`);
      fs.writeFileSync(tmpFile, content);
      fs.renameSync(tmpFile, path.join(manifests, file));
    },
    remove(file) {
      fs.rmSync(path.join(manifests, file));
    },
    pods: (podName) => readPods((p) => p.name === `${podName}-${node}`),
    namedPods: (podName) => readPods((p) => p.name === podName && p.namespace === 'kube-system'),
  };
  async function readPods(wanted: (p: RuntimePod) => boolean): Promise<RuntimePod[]> {
    const runtime = must(cri, 'the CRI client').runtime;
    const listed = [...(await listRuntimePods(runtime)).values()].filter(wanted);
    const full = await Promise.all(listed.map((p) => readRuntimePod(runtime, p.uid)));
    return full.filter((p): p is RuntimePod => p !== undefined);
  }
  return h;
}

// A container's death through the agent: from `kill -9` of its process to the agent noticing it
// (its PLEG event) and to the replacement running, with the crash-loop back-off set to zero for
// the pod so that only detection and restart are measured.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PrivateContainerd } from '../dev/containerd.js';
import type { RuntimeService } from '../src/cri/cri-types.js';
import { listRuntimePods } from '../src/kuberuntime/runtime-pods.js';
import type { RunningAgent } from '../test/support/agent.js';
import { waitFor } from '../test/support/wait.js';
import { benchPodManifest, BENCH_NODE } from './pods.js';
import { percentile } from './report.js';

export interface RestartNumbers {
  detectP50: number;
  detectP95: number;
  restartP50: number;
  restartP95: number;
  kills: number;
}

async function taskPid(cd: PrivateContainerd, containerId: string): Promise<number> {
  const out = await cd.ctr(['tasks', 'ls']);
  const line = out.split('\n').find((l) => l.startsWith(containerId));
  const pid = Number(line?.trim().split(/\s+/)[1]);
  if (!pid) throw new Error(`no task for container ${containerId}`);
  return pid;
}

export async function measureKillToRestart(o: {
  agent: RunningAgent;
  cd: PrivateContainerd;
  runtime: RuntimeService;
  manifests: string;
  kills: number;
}): Promise<RestartNumbers> {
  const name = 'victim';
  const key = `default/${name}-${BENCH_NODE}`;
  const manifest = benchPodManifest(name).replace(
    'metadata: {name: victim, namespace: default}',
    'metadata: {name: victim, namespace: default, annotations: {bootlet.io/crashloop-backoff-max-seconds: "0"}}',
  );
  fs.writeFileSync(path.join(o.manifests, `.${name}.tmp`), manifest);
  fs.renameSync(path.join(o.manifests, `.${name}.tmp`), path.join(o.manifests, `${name}.yaml`));
  const detect: number[] = [];
  const restart: number[] = [];
  const running = async () => {
    const pods = await listRuntimePods(o.runtime);
    const pod = [...pods.values()].find((p) => p.name === `${name}-${BENCH_NODE}`);
    return pod?.containers.find((c) => c.state === 1);
  };
  let current = await waitFor(running, { timeoutMs: 60_000, what: 'victim running' });
  for (let i = 0; i < o.kills; i++) {
    const pid = await taskPid(o.cd, current.id);
    const seen = o.agent.records().length;
    const t0 = Date.now();
    process.kill(pid, 'SIGKILL');
    const died = await waitFor(
      () =>
        o.agent
          .records()
          .slice(seen)
          .find((r) => r.msg === 'PLEG event' && r.event === 'ContainerDied' && r.id === current.id),
      {
        timeoutMs: 30_000,
        what: `PLEG to report kill ${i}`,
      },
    );
    const started = await waitFor(
      () =>
        o.agent
          .records()
          .slice(seen)
          .find((r) => r.msg === 'Started container' && r.pod === key),
      {
        timeoutMs: 30_000,
        what: `replacement ${i} running`,
      },
    );
    detect.push(Number(died.ts) * 1000 - t0);
    restart.push(Number(started.ts) * 1000 - t0);
    current = await waitFor(
      async () => {
        const c = await running();
        return c && c.id === started.containerID ? c : undefined;
      },
      { timeoutMs: 30_000, what: 'replacement listed' },
    );
  }
  fs.rmSync(path.join(o.manifests, `${name}.yaml`));
  return {
    detectP50: percentile(detect, 50),
    detectP95: percentile(detect, 95),
    restartP50: percentile(restart, 50),
    restartP95: percentile(restart, 95),
    kills: o.kills,
  };
}

// The CRI calls a pod start costs, counted by the packaged agent's own kubelet_runtime_operations_total
// (what went over the wire) against the real private containerd: a busybox hostNetwork static pod
// needs RunPodSandbox, ImageStatus, CreateContainer, StartContainer and one read by id of each new
// object (README "CRI calls per pod start" names the kubelet's reason for each); the burst's own
// task events must not cause a full relist. Measured for one pod and for 30 at once; the agent's
// view is then checked against the runtime's, so nothing it reports is a guess the runtime contradicts.
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods } from '../../../src/kuberuntime/runtime-pods.js';
import { apiTimeFromNs } from '../../../src/util/api-time.js';
import { operationsBetween, scrapeRuntimeOperations, type OperationCounts } from '../../support/cri-calls.js';
import type { RunningAgent } from '../../support/agent.js';
import { getFromAgentSocket } from '../../support/agent-socket.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-cricalls';
// v4: the PLEG logs each full relist with its cause.
const h = useAgentHarness('cri-calls', NODE, { extraArgs: ['--v=4'] });
let agent: RunningAgent;

/** The most a busybox hostNetwork pod start may cost (issue 18). */
const MAX_CALLS_PER_POD = 6;

function busybox(name: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;
}

interface AgentPodStatus {
  metadata?: { name?: string };
  status?: {
    phase?: string;
    containerStatuses?: { containerID?: string; state?: { running?: { startedAt?: string } } }[];
  };
}

async function agentPods(): Promise<AgentPodStatus[]> {
  return (JSON.parse(await getFromAgentSocket(h.rootDir, '/pods')) as { items?: AgentPodStatus[] }).items ?? [];
}

function runningInAgent(pods: AgentPodStatus[], name: string): boolean {
  const statuses = pods.find((p) => p.metadata?.name === `${name}-${NODE}`)?.status?.containerStatuses ?? [];
  return statuses.length > 0 && statuses.every((c) => c.state?.running !== undefined);
}

/** The full relists the agent logged from record index `from` on, by cause. */
function relistsSince(from: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of agent.records().slice(from))
    if (r.msg === 'PLEG relist') out.set(String(r.cause), (out.get(String(r.cause)) ?? 0) + 1);
  return out;
}

function total(c: OperationCounts): number {
  return [...c.values()].reduce((a, b) => a + b, 0);
}

/**
 * The calls of the start of `names`: from writing their manifests until the agent's status says
 * every container is running and the agent has made no call for a while. The safety-net relist
 * (every 10 s, whatever happens) is taken out: one ListPodSandbox and one ListContainers each; so
 * is the runtime health check's Status (the kubelet's updateRuntimeUp), which is no pod's.
 */
async function measureStart(names: string[]): Promise<{ calls: OperationCounts; relists: Map<string, number> }> {
  const fromRecord = agent.records().length;
  const before = await scrapeRuntimeOperations(h.rootDir);
  for (const n of names) h.write(`${n}.yaml`, busybox(n));
  await waitFor(
    async () => {
      const pods = await agentPods();
      return names.every((n) => runningInAgent(pods, n));
    },
    { timeoutMs: 120_000, what: `${names.length} pods Running in the agent's status` },
  );
  // Quiet: no call beyond the periodic relist's for 1.5 s.
  let last = -1;
  let calls: OperationCounts = new Map();
  await waitFor(
    async () => {
      const now = operationsBetween(before, await scrapeRuntimeOperations(h.rootDir));
      const periodic = relistsSince(fromRecord).get('period') ?? 0;
      for (const op of ['list_podsandbox', 'list_containers']) {
        const n = (now.get(op) ?? 0) - periodic;
        if (n > 0) now.set(op, n);
        else now.delete(op);
      }
      now.delete('status');
      const settled = total(now) === last;
      last = total(now);
      calls = now;
      return settled;
    },
    { timeoutMs: 60_000, intervalMs: 1500, what: 'the agent to stop calling the runtime' },
  );
  return { calls, relists: relistsSince(fromRecord) };
}

/** The agent's status against the runtime: the same container ids, running, started when the runtime says. */
async function expectAgentAgreesWithRuntime(names: string[]): Promise<void> {
  const pods = await agentPods();
  const runtime = await listRuntimePods(h.cri().runtime);
  for (const n of names) {
    const rp = [...runtime.values()].find((p) => p.name === `${n}-${NODE}`);
    const c = rp?.containers.find((x) => x.name === 'main');
    expect(c?.state, `${n} running in the runtime`).toBe(ContainerState.CONTAINER_RUNNING);
    const st = await h.cri().runtime.containerStatus(c!.id);
    const mine = pods.find((p) => p.metadata?.name === `${n}-${NODE}`)?.status?.containerStatuses?.[0];
    expect(mine?.containerID, n).toBe(`containerd://${c!.id}`);
    expect(mine?.state?.running?.startedAt, `${n} startedAt`).toBe(apiTimeFromNs(st.startedAt));
  }
}

async function removeAll(names: string[]): Promise<void> {
  for (const n of names) h.remove(`${n}.yaml`);
  await waitFor(
    async () =>
      [...(await listRuntimePods(h.cri().runtime)).values()].every(
        (p) => !names.some((n) => p.name === `${n}-${NODE}`),
      ),
    {
      timeoutMs: 120_000,
      what: 'the pods removed',
    },
  );
}

function report(what: string, pods: number, m: { calls: OperationCounts; relists: Map<string, number> }): void {
  const perPod = [...m.calls].sort((a, b) => b[1] - a[1]).map(([op, n]) => `${op}=${(n / pods).toFixed(2)}`);
  console.log(
    `${what}: ${(total(m.calls) / pods).toFixed(2)} CRI calls per pod start (${perPod.join(' ')}); full relists ${JSON.stringify(Object.fromEntries(m.relists))}`,
  );
}

beforeAll(async () => {
  agent = h.launch();
  await agent.waitForLog((r) => r.msg === 'PLEG mechanism chosen', 'PLEG mechanism chosen', 30_000);
  await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'agent ready', 30_000);
  // One start first: the image is resolved once by containerd and the QoS cgroups exist.
  h.write('warmup.yaml', busybox('warmup'));
  await waitFor(async () => runningInAgent(await agentPods(), 'warmup'), { timeoutMs: 60_000, what: 'warmup Running' });
  h.remove('warmup.yaml');
  await waitFor(
    async () => [...(await listRuntimePods(h.cri().runtime)).values()].every((p) => !p.name.startsWith('warmup')),
    { timeoutMs: 60_000, what: 'warmup removed' },
  );
}, 180_000);

describe('CRI calls per pod start (busybox, hostNetwork)', () => {
  it(`one pod: at most ${MAX_CALLS_PER_POD} calls, no full relist from its own events`, async () => {
    const m = await measureStart(['one']);
    report('1 pod', 1, m);

    expect(total(m.calls)).toBeLessThanOrEqual(MAX_CALLS_PER_POD);
    for (const op of ['run_podsandbox', 'create_container', 'start_container']) expect(m.calls.get(op), op).toBe(1);
    expect(m.relists.get('event') ?? 0, 'full relists from task events').toBe(0);
    expect(m.relists.get('follow-up') ?? 0, 'full relists following task events').toBe(0);
    await expectAgentAgreesWithRuntime(['one']);
    await removeAll(['one']);
  }, 180_000);

  it(`30 pods at once: at most ${MAX_CALLS_PER_POD} calls each, no full relist from their own events`, async () => {
    const names = Array.from({ length: 30 }, (_, i) => `burst${i}`);
    const m = await measureStart(names);
    report('30 pods', 30, m);
    expect(total(m.calls) / names.length).toBeLessThanOrEqual(MAX_CALLS_PER_POD);
    for (const op of ['run_podsandbox', 'create_container', 'start_container']) expect(m.calls.get(op), op).toBe(30);
    expect(m.relists.get('event') ?? 0, 'full relists from task events').toBe(0);
    expect(m.relists.get('follow-up') ?? 0, 'full relists following task events').toBe(0);
    await expectAgentAgreesWithRuntime(names);
    await removeAll(names);
  }, 300_000);
});

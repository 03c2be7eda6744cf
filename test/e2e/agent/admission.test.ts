// Admission through the packaged agent: with --max-pods=3 the first three static pods run and the
// rest are Failed with the kubelet's reason, never get a sandbox, and show in /pods and
// `bootlet pods`; a nodeSelector the node does not satisfy and a taken host port are refused for
// that; a static pod asking more CPU than the node has, with only critical pods to preempt, is
// refused as the kubelet's critical pod handler refuses it; a restart with a smaller maxPods keeps
// the pods it finds running.
import { execFile } from 'node:child_process';
import { cpus } from 'node:os';
import { promisify } from 'node:util';
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { BOOTLET_EXE, type RunningAgent } from '../../support/agent.js';
import { freePorts } from '../../support/ports.js';
import { readOnlyPods } from '../../support/read-only-pods.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-adm';
const h = useAgentHarness('admission', NODE);
const run = promisify(execFile);
let agent: RunningAgent;
let readOnlyPort: number;
let hostPort: number;
/** Cores the cpu-hog asks for: more than this machine has. */
const HOG_CPU = cpus().length + 2;

function manifest(name: string, extra = ''): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
${extra}  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`;
}

const withPort = (): string =>
  `  nodeSelector: {kubernetes.io/hostname: ${NODE}}\n  containers:\n  - name: main\n    image: ${TEST_IMAGES.busybox}\n    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]\n    ports: [{containerPort: ${hostPort}}]\n`;

function portManifest(name: string): string {
  return `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: kube-system}\nspec:\n  hostNetwork: true\n  terminationGracePeriodSeconds: 1\n${withPort()}`;
}

const getPods = (): Promise<PodList> => readOnlyPods(readOnlyPort);

const byName = (list: PodList, name: string): Pod | undefined =>
  list.items.find((p) => p.metadata?.name === `${name}-${NODE}`);

async function running(name: string): Promise<string | undefined> {
  const pods = await h.pods(name);
  return pods[0]?.containers.some((c) => c.name === 'main' && c.state === ContainerState.CONTAINER_RUNNING)
    ? pods[0].sandboxes[0]?.id
    : undefined;
}

const refusals = (a: RunningAgent, name: string) =>
  a.records().filter((r) => r.msg === 'Pod refused admission' && r.pod === `kube-system/${name}-${NODE}`);

beforeAll(async () => {
  [readOnlyPort, hostPort] = await freePorts(2);
  agent = h.launch({ readOnlyPort, extraArgs: ['--max-pods=3'] });
  // One after another, so that the first three are the oldest.
  for (const name of ['p1', 'p2']) {
    h.write(`${name}.yaml`, manifest(name));
    await waitFor(() => running(name), { timeoutMs: 90_000, what: `${name} to run` });
  }
  h.write('p3.yaml', portManifest('p3'));
  await waitFor(() => running('p3'), { timeoutMs: 90_000, what: 'p3 to run' });
  h.write('p4.yaml', manifest('p4'));
  h.write('p5.yaml', manifest('p5'));
  h.write('picky.yaml', manifest('picky', '  nodeSelector: {disktype: hdd}\n'));
  h.write('clash.yaml', portManifest('clash'));
  h.write(
    'cpu-hog.yaml',
    manifest('cpu-hog').replace(/(    command: .*\n)/, `$1    resources: {requests: {cpu: "${HOG_CPU}"}}\n`),
  );
});

describe('admission of static pods', () => {
  it('refuses the pods past maxPods as the kubelet refuses a critical pod it cannot make room for', async () => {
    const list = await waitFor(
      async () => {
        const l = await getPods();
        // The admitted pods' status follows their containers after the status manager's settle.
        const refused = ['p4', 'p5', 'picky', 'clash', 'cpu-hog'].every(
          (n) => byName(l, n)?.status?.phase === 'Failed',
        );
        return refused && ['p1', 'p2', 'p3'].every((n) => byName(l, n)?.status?.phase !== 'Pending') ? l : undefined;
      },
      { timeoutMs: 60_000, what: '/pods to show the refused pods Failed and the admitted ones past Pending' },
    );
    for (const name of ['p4', 'p5']) {
      expect(byName(list, name)?.status).toMatchObject({
        phase: 'Failed',
        reason: 'UnexpectedAdmissionError',
        message:
          'Pod was rejected: Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: pods, q: 1), ]',
      });
    }
    for (const name of ['p1', 'p2', 'p3']) expect(byName(list, name)?.status?.phase).toBe('Running');
  });

  it('refuses a static pod asking more CPU than allocatable when only critical pods could make room, naming every lack', async () => {
    const list = await getPods();
    // Allocatable CPU is the machine's logical CPUs; nothing else requests any.
    const lackMillis = HOG_CPU * 1000 - Math.max(1, cpus().length) * 1000;
    expect(byName(list, 'cpu-hog')?.status).toMatchObject({
      phase: 'Failed',
      reason: 'UnexpectedAdmissionError',
      message: `Pod was rejected: Unexpected error while attempting to recover from admission failure: preemption: error finding a set of pods to preempt: no set of running pods found to reclaim resources: [(res: pods, q: 1), (res: cpu, q: ${lackMillis}), ]`,
    });
    expect(await h.pods('cpu-hog')).toEqual([]);
  });

  it('refuses a nodeSelector the node does not satisfy, and a taken host port, for that', async () => {
    const list = await getPods();
    expect(byName(list, 'picky')?.status).toMatchObject({
      phase: 'Failed',
      reason: 'NodeAffinity',
      message: "Pod was rejected: Predicate NodeAffinity failed: node(s) didn't match Pod's node affinity/selector",
    });
    expect(byName(list, 'clash')?.status).toMatchObject({
      phase: 'Failed',
      reason: 'NodePorts',
      message:
        "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
    });
  });

  it('never gives a refused pod a sandbox, and says so once per pod', async () => {
    for (const name of ['p4', 'p5', 'picky', 'clash']) {
      expect(await h.pods(name)).toEqual([]);
      expect(refusals(agent, name)).toHaveLength(1);
    }
  });

  it('lists the refused pods in `bootlet pods` with their reason', async () => {
    const { stdout } = await run(BOOTLET_EXE, ['pods', '-o', 'json', `--root-dir=${h.rootDir}`]);
    const list = JSON.parse(stdout) as PodList;
    expect(byName(list, 'picky')?.status?.reason).toBe('NodeAffinity');
    expect(byName(list, 'p5')?.status?.reason).toBe('UnexpectedAdmissionError');
    const table = (await run(BOOTLET_EXE, ['pods', `--root-dir=${h.rootDir}`])).stdout;
    expect(table).toMatch(new RegExp(`clash-${NODE}\\s.*NodePorts`));
  });

  it('keeps the pods it finds running on a restart with a smaller maxPods; the refused stay refused', async () => {
    const before = await Promise.all(['p1', 'p2', 'p3'].map(running));
    await agent.kill('SIGTERM');
    agent = h.launch({ readOnlyPort, extraArgs: ['--max-pods=2'] });
    const list = await waitFor(
      async () => {
        const l = await getPods().catch(() => undefined);
        return l && ['p1', 'p2', 'p3', 'p4', 'p5'].every((n) => byName(l, n)?.status?.phase !== undefined)
          ? l
          : undefined;
      },
      { timeoutMs: 60_000, what: '/pods after the restart' },
    );
    for (const name of ['p1', 'p2', 'p3']) expect(byName(list, name)?.status?.phase).toBe('Running');
    expect(byName(list, 'p4')?.status?.phase).toBe('Failed');
    expect(await Promise.all(['p1', 'p2', 'p3'].map(running))).toEqual(before);
    expect(await h.pods('p4')).toEqual([]);
  });
});

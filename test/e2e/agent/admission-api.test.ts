// Admission through the packaged agent with the API server (the fake one, pods created by real
// kubectl): an API pod asking more CPU or memory than the node has left is Failed in the API with
// the kubelet's OutOfcpu / OutOfmemory and "Pod was rejected: ..." and never gets a sandbox; a static
// (critical) pod that does not fit preempts a non-critical API pod, which is Failed with the
// kubelet's Preempting status and DisruptionTarget condition, and starts only once the victim's
// containers have been killed; sysctls are admitted as the kubelet's allowlist (the safe ones and
// allowedUnsafeSysctls) has them, the others refused with SysctlForbidden; a net sysctl with
// hostNetwork never reaches admission: the API server's validation refuses it, and so does bootlet's.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Node, PodList } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { parseQuantity } from '../../../src/k8s/quantity.js';
import type { RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { busyboxApiPod, busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { freePorts } from '../../support/ports.js';
import { readOnlyPods } from '../../support/read-only-pods.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'adm-api-e2e';
const h = useAgentHarness('admission-api', NODE);
let api: FakeApiServer;
let kubectl: Kubectl;
let readOnlyPort: number;
/** The Node's allocatable as the agent registered it: milli-cores and bytes. */
let cpuMillis: number;
let memoryBytes: number;

/** An API pod bound to the node, as a controller would write it; `trapTerm: false` ignores SIGTERM. */
const apiPod = (
  name: string,
  opts: { requests?: Record<string, string>; grace?: number; ignoreTerm?: boolean } = {},
): string =>
  busyboxApiPod(name, NODE, {
    spec: { terminationGracePeriodSeconds: opts.grace ?? 1 },
    container: {
      ...(opts.ignoreTerm ? { command: ['sh', '-c', "trap '' TERM; while true; do sleep 1; done"] } : {}),
      ...(opts.requests ? { resources: { requests: opts.requests } } : {}),
    },
  });

const apiObject = (name: string) => api.pod('kube-system', name);

const runtimePods = (name: string): Promise<RuntimePod[]> => h.namedPods(name);
const running = (p: RuntimePod | undefined) => p?.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING);

const localPods = (): Promise<PodList> => readOnlyPods(readOnlyPort);

const localPod = (list: PodList, name: string) => list.items.find((p) => p.metadata?.name === `${name}-${NODE}`);

function sysctlPod(name: string, sysctls: Record<string, string>, command = SLEEP_LOOP): string {
  const list = Object.entries(sysctls)
    .map(([n, v]) => `{name: ${n}, value: "${v}"}`)
    .join(', ');
  return busyboxPod(name, command).replace(
    '  hostNetwork: true\n',
    `  hostNetwork: true\n  securityContext: {sysctls: [${list}]}\n`,
  );
}

beforeAll(async () => {
  [readOnlyPort] = await freePorts(1);
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  const kubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, ['system:nodes']);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  h.launch({
    readOnlyPort,
    extraArgs: ['--v=2', `--kubeconfig=${kubeconfig}`, '--allowed-unsafe-sysctls=kernel.msg*'],
  });
  const node = await waitFor(
    () =>
      (api.object('nodes', '', NODE) as unknown as Node | undefined)?.status?.allocatable
        ? (api.object('nodes', '', NODE) as unknown as Node)
        : undefined,
    { timeoutMs: 60_000, what: 'the Node registered with its allocatable' },
  );
  cpuMillis = parseQuantity(node.status!.allocatable!.cpu!).milliValue();
  memoryBytes = parseQuantity(node.status!.allocatable!.memory!).value();
}, 120_000);

afterAll(async () => {
  await api?.dispose();
});

describe('admission of API pods', () => {
  it('an API pod asking more CPU or memory than the node has is Failed in the API with OutOfcpu / OutOfmemory and never runs', async () => {
    const cpu = cpuMillis + 500;
    const memory = memoryBytes + 1024 ** 3;
    await kubectl.ok(['create', '-f', '-'], 60_000, apiPod('cpu-hog', { requests: { cpu: `${cpu}m` } }));
    await kubectl.ok(['create', '-f', '-'], 60_000, apiPod('mem-hog', { requests: { memory: String(memory) } }));
    const failed = (name: string) => (apiObject(name)?.status?.phase === 'Failed' ? apiObject(name) : undefined);
    const cpuHog = await waitFor(() => failed('cpu-hog'), { timeoutMs: 60_000, what: 'cpu-hog Failed in the API' });
    const memHog = await waitFor(() => failed('mem-hog'), { timeoutMs: 60_000, what: 'mem-hog Failed in the API' });
    expect(cpuHog.status).toMatchObject({
      phase: 'Failed',
      reason: 'OutOfcpu',
      message: `Pod was rejected: Node didn't have enough resource: cpu, requested: ${cpu}, used: 0, capacity: ${cpuMillis}`,
    });
    expect(memHog.status).toMatchObject({
      phase: 'Failed',
      reason: 'OutOfmemory',
      message: `Pod was rejected: Node didn't have enough resource: memory, requested: ${memory}, used: 0, capacity: ${memoryBytes}`,
    });
    expect(cpuHog.status?.qosClass).toBe('Burstable');
    expect(await runtimePods('cpu-hog')).toEqual([]);
    expect(await runtimePods('mem-hog')).toEqual([]);
    // Told as a Warning event on the pod, with the reason.
    await waitFor(
      () =>
        api
          .objects('events', 'kube-system')
          .find(
            (e) =>
              (e as unknown as { reason?: string; involvedObject?: { name?: string } }).reason === 'OutOfcpu' &&
              (e as unknown as { involvedObject?: { name?: string } }).involvedObject?.name === 'cpu-hog',
          ),
      { timeoutMs: 30_000, what: 'the OutOfcpu event' },
    );
  });

  it('sysctls: the safe ones and allowedUnsafeSysctls are admitted; an unsafe one is refused (SysctlForbidden); a net one with hostNetwork is refused as the API server refuses it', async () => {
    h.write(
      'sysctl-ok.yaml',
      sysctlPod(
        'sysctl-ok',
        { 'kernel.msgmax': '65536', 'kernel.shm_rmid_forced': '1' },
        `cat /proc/sys/kernel/msgmax; ${SLEEP_LOOP}`,
      ),
    );
    h.write('sysctl-unsafe.yaml', sysctlPod('sysctl-unsafe', { 'kernel.sem': '250 32000 100 128' }));
    h.write('sysctl-hostnet.yaml', sysctlPod('sysctl-hostnet', { 'net.ipv4.tcp_syncookies': '1' }));
    const list = await waitFor(
      async () => {
        const l = await localPods();
        return localPod(l, 'sysctl-unsafe')?.status?.phase === 'Failed' &&
          localPod(l, 'sysctl-ok')?.status?.phase === 'Running'
          ? l
          : undefined;
      },
      { timeoutMs: 90_000, what: 'the sysctl pods admitted or refused' },
    );
    expect(localPod(list, 'sysctl-unsafe')?.status).toMatchObject({
      reason: 'SysctlForbidden',
      message: 'Pod was rejected: forbidden sysctl: "kernel.sem" not allowlisted',
    });
    expect(await runtimePods(`sysctl-unsafe-${NODE}`)).toEqual([]);
    // ValidatePodCreate refuses a net sysctl in the host's network namespace before any kubelet sees it.
    const refusal = await h
      .agent()
      .waitForLog(
        (r) => r.msg === 'Static pod manifest refused' && String(r.file).endsWith('sysctl-hostnet.yaml'),
        'sysctl-hostnet refused',
        30_000,
      );
    expect(refusal.err).toContain(
      `spec.securityContext.sysctls[0].name: Invalid value: "net.ipv4.tcp_syncookies": may not be specified when 'hostNetwork' is true`,
    );
    expect(localPod(list, 'sysctl-hostnet')).toBeUndefined();
    expect(await runtimePods(`sysctl-hostnet-${NODE}`)).toEqual([]);
    // The allowed one runs with its sysctl set in the pod's IPC namespace.
    const ok = (await runtimePods(`sysctl-ok-${NODE}`))[0]!;
    const log = path.join(h.podLogsDir, `kube-system_sysctl-ok-${NODE}_${ok.uid}`, 'main', '0.log');
    await waitFor(() => fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes(' 65536'), {
      timeoutMs: 30_000,
      what: 'the container to print kernel.msgmax',
    });
  });

  it('a static pod that does not fit preempts a non-critical API pod: Failed, Preempting, DisruptionTarget; it starts once the victim has been killed', async () => {
    const victimCpu = Math.floor((cpuMillis * 3) / 4);
    const criticalCpu = Math.floor(cpuMillis / 2);
    // The victim ignores SIGTERM: only its 4 s grace period ends it.
    await kubectl.ok(
      ['create', '-f', '-'],
      60_000,
      apiPod('victim', { requests: { cpu: `${victimCpu}m` }, grace: 4, ignoreTerm: true }),
    );
    await waitFor(async () => running((await runtimePods('victim'))[0]), {
      timeoutMs: 90_000,
      what: 'the victim running',
    });
    await waitFor(() => (apiObject('victim')?.status?.phase === 'Running' ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the victim Running in the API',
    });

    const resources = `    resources: {requests: {cpu: ${criticalCpu}m}}\n`;
    const writtenAt = Date.now();
    h.write('critical.yaml', busyboxPod('critical', SLEEP_LOOP).replace(/(    command: .*\n)/, `$1${resources}`));
    const critical = await waitFor(
      async () => {
        const p = (await runtimePods(`critical-${NODE}`))[0];
        return running(p) ? p : undefined;
      },
      { timeoutMs: 90_000, what: 'the critical pod running' },
    );
    // Its sandbox was made only once the victim had been killed: the victim ignores SIGTERM, so
    // that is its 4 s grace after the preemption (today's agent made it at once, beside the kill).
    const sandboxMs = critical.sandboxes[0]!.createdAt / 1e6;
    const evicted = h
      .agent()
      .records()
      .find((r) => r.msg === 'Pod evicted successfully' && r.pod === 'kube-system/victim');
    expect(evicted).toBeDefined();
    expect(Number(evicted!.ts) * 1000).toBeLessThanOrEqual(sandboxMs);
    expect(sandboxMs - writtenAt).toBeGreaterThan(3500);
    expect(await runtimePods('victim')).toEqual([]);

    const status = await waitFor(
      () => {
        const s = apiObject('victim')?.status;
        return s?.phase === 'Failed' && s.containerStatuses?.[0]?.state?.terminated ? s : undefined;
      },
      { timeoutMs: 60_000, what: 'the victim Failed in the API with its container terminated' },
    );
    expect(status).toMatchObject({
      phase: 'Failed',
      reason: 'Preempting',
      message: 'Preempted in order to admit critical pod',
    });
    expect(status.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({
      status: 'True',
      reason: 'TerminationByKubelet',
      message: 'Pod was preempted by Kubelet to accommodate a critical pod.',
    });
    expect(status.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(137);
    expect(Date.parse(status.containerStatuses![0]!.state!.terminated!.finishedAt!)).toBeLessThanOrEqual(sandboxMs);
    const events = api.objects('events', 'kube-system') as unknown as {
      reason?: string;
      type?: string;
      message?: string;
      involvedObject?: { name?: string };
    }[];
    expect(events.find((e) => e.reason === 'Preempting' && e.involvedObject?.name === 'victim')).toMatchObject({
      type: 'Warning',
      message: 'Preempted in order to admit critical pod',
    });
  });
});

// The packaged agent as an operator runs it: under systemd's notification protocol (a socket that
// records the datagrams), with its log lines for the journal, scraped by Prometheus, fed by
// staticPodURL, and looked at with `bootlet logs` and `bootlet validate`.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { BOOTLET_EXE, type AgentOptions, type RunningAgent } from '../../support/agent.js';
import { startNotifySocket, type NotifySocket } from '../../support/notify-socket.js';
import { freePorts } from '../../support/ports.js';
import { parsePrometheusText } from '../../support/prom-text.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-op';
const h = useAgentHarness('operator', NODE);
const run = promisify(execFile);
const FAMILIES = (
  JSON.parse(fs.readFileSync(path.join(__dirname, '../../fixtures/kubelet/metric-families.json'), 'utf8')) as {
    families: Array<{ name: string; type: string }>;
  }
).families;

const REMOTE = JSON.stringify({
  apiVersion: 'v1',
  kind: 'PodList',
  items: [
    {
      metadata: { name: 'remote', namespace: 'kube-system' },
      spec: {
        hostNetwork: true,
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: TEST_IMAGES.busybox, command: ['sh', '-c', SLEEP_LOOP] }],
      },
    },
  ],
});

let notify: NotifySocket;
let agent: RunningAgent;
let readOnlyPort: number;
let urlPort: number;
let server: http.Server | undefined;

function serve(): Promise<void> {
  server = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(REMOTE));
  return new Promise((r) => server!.listen(urlPort, '127.0.0.1', () => r()));
}
function unserve(): Promise<void> {
  const s = server;
  server = undefined;
  if (!s) return Promise.resolve();
  s.closeAllConnections();
  return new Promise((r) => s.close(() => r()));
}

const options = (): Partial<AgentOptions> => ({
  readOnlyPort,
  // --v=4: each failed poll of the URL and each pod sync is a line the tests wait for.
  extraArgs: [`--manifest-url=http://127.0.0.1:${urlPort}/pods`, '--http-check-frequency=1s', '--v=4'],
  env: { NOTIFY_SOCKET: notify.path, WATCHDOG_USEC: '2000000' },
  // stderr is the journal when JOURNAL_STREAM names it, as systemd sets it for a service.
  execWrap: ['sh', '-c', 'export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); exec "$@"', 'sh'],
});

const OUTAGE =
  'Cannot read static pods from staticPodURL; the pods it gave keep running, retrying every httpCheckFrequency';

/** The agent's records from index `from` on with message `msg`. */
function logged(msg: string, from = 0): Record<string, unknown>[] {
  return agent
    .records()
    .slice(from)
    .filter((r) => r.msg === msg);
}

/** Waits until the agent has polled the unreachable URL `n` more times (a v=4 line each). */
async function failedPolls(n: number, what: string): Promise<void> {
  const from = agent.records().length;
  await waitFor(() => logged('staticPodURL still unreadable', from).length >= n, {
    timeoutMs: 30_000,
    what: `${n} more failed polls of the URL: ${what}`,
  });
}

async function running(name: string): Promise<string | undefined> {
  const pods = await h.pods(name);
  return pods
    .flatMap((p) => p.containers)
    .find((c) => c.name === 'main' && c.state === ContainerState.CONTAINER_RUNNING)?.id;
}

beforeAll(async () => {
  [readOnlyPort, urlPort] = await freePorts(2);
  notify = await startNotifySocket(path.join(h.dir, 'notify.sock'));
  await serve();
  h.write('good.yaml', busyboxPod('good', `echo hello from good; ${SLEEP_LOOP}`));
  h.write('crash.yaml', busyboxPod('crash', 'echo boom; exit 1'));
  agent = h.launch(options());
});

afterAll(async () => {
  await agent?.kill('SIGKILL');
  await unserve();
  await notify?.close();
});

describe('the packaged agent for an operator', () => {
  it('tells systemd READY once every static pod found at start has synced, then what it waits for', async () => {
    const ready = await notify.waitFor((m) => m.fields.READY === '1', 'READY=1', 120_000);
    // Synced before READY: the pods found at start have their containers. The runtime says so for the
    // pod that keeps running; the crashing one's first container may already be dead and removed (its
    // replacement made after READY), so the agent's own start of it is what is compared.
    const created = (await h.pods('good')).flatMap((p) => p.containers).map((c) => c.createdAt / 1e6);
    expect(created.length, 'good').toBeGreaterThan(0);
    expect(Math.min(...created)).toBeLessThanOrEqual(ready.at);
    // The line may be read from the agent's stderr after the notification arrived.
    const isReadyLine = (r: Record<string, unknown>): boolean =>
      String(r.msg).startsWith('Every static pod found at start has been synced');
    await agent.waitForLog(isReadyLine, 'the READY line', 10_000);
    const records = agent.records();
    const readyLine = records.findIndex(isReadyLine);
    const firstStart = records.findIndex((r) => r.msg === 'Started container' && r.pod === `kube-system/crash-${NODE}`);
    expect(readyLine).toBeGreaterThan(0);
    expect(firstStart).toBeGreaterThanOrEqual(0);
    expect(firstStart).toBeLessThan(readyLine);
    expect(notify.messages[0]?.fields.STATUS).toBe('Reading static pod manifests');
    expect(notify.messages.indexOf(ready)).toBeGreaterThan(0);
    expect(ready.pid).toBe(agent.proc.pid);
    await notify.waitFor(
      (m) =>
        /^2\/3 static pods running; waiting for crash-node-op \((CrashLoopBackOff|Error)\)$/.test(
          m.fields.STATUS ?? '',
        ),
      'STATUS naming the crashing pod',
      120_000,
    );
    await waitFor(() => notify.with('WATCHDOG').length >= 2, { timeoutMs: 30_000, what: 'two watchdog pings' });
  });

  it('starts each log line with its priority when stderr is the journal', () => {
    expect(agent.lines.length).toBeGreaterThan(5);
    for (const l of agent.lines) expect(l).toMatch(/^<[3467]>\{/);
    expect(agent.lines.some((l) => l.startsWith('<6>'))).toBe(true);
    expect(agent.lines.some((l) => l.startsWith('<7>'))).toBe(true); // --v=2 lines
  });

  it('serves the kubelet metric families, filled in by what the agent did', async () => {
    // The remote pod may still be starting: the figures are awaited (the last failed one is reported).
    await waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${readOnlyPort}/metrics`)).text();
        const families = parsePrometheusText(text);
        for (const f of FAMILIES) expect(families.get(f.name)?.type, f.name).toBe(f.type);
        const value = (name: string, labels: Record<string, string> = {}): number =>
          families
            .get(name.replace(/_(count|sum|bucket)$/, ''))
            ?.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
            .reduce((n, s) => n + s.value, 0) ?? 0;
        expect(value('kubelet_runtime_operations_total', { operation_type: 'run_podsandbox' })).toBeGreaterThanOrEqual(
          3,
        );
        expect(value('kubelet_runtime_operations_total', { operation_type: 'list_containers' })).toBeGreaterThan(0);
        expect(
          value('kubelet_runtime_operations_duration_seconds_count', { operation_type: 'create_container' }),
        ).toBeGreaterThanOrEqual(3);
        expect(value('kubelet_pleg_relist_duration_seconds_count')).toBeGreaterThan(0);
        expect(value('kubelet_pod_worker_duration_seconds_count', { operation_type: 'create' })).toBeGreaterThanOrEqual(
          3,
        );
        expect(value('kubelet_pod_worker_duration_seconds_count', { operation_type: 'sync' })).toBeGreaterThan(0);
        expect(value('kubelet_started_containers_total', { container_type: 'container' })).toBeGreaterThanOrEqual(3);
        expect(value('kubelet_pod_start_duration_seconds_count')).toBeGreaterThanOrEqual(2);
        expect(value('kubelet_pod_start_sli_duration_seconds_count')).toBeGreaterThanOrEqual(2);
        expect(value('kubelet_running_pods')).toBe(3);
        expect(value('kubelet_node_name', { node: NODE })).toBe(1);
        expect(value('process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024);
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: 'the metrics to show what the agent did' },
    );
  });

  it('runs the pods of staticPodURL as http pods, and keeps them running when the server goes away', async () => {
    const id = await waitFor(() => running('remote'), { timeoutMs: 60_000, what: 'the remote pod to run' });
    const sandboxes = await h.cri().runtime.listPodSandbox();
    expect(
      sandboxes.find((s) => s.metadata?.name === `remote-${NODE}`)?.annotations?.['kubernetes.io/config.source'],
    ).toBe('http');
    await unserve();
    await agent.waitForLog((r) => r.msg === OUTAGE, 'the outage line', 30_000);
    await failedPolls(3, 'each could have said so again, or dropped the pods');
    expect(
      agent
        .records()
        .filter(
          (r) => typeof r.msg === 'string' && (r.msg as string).startsWith('Cannot read static pods from staticPodURL'),
        ),
    ).toHaveLength(1);
    expect(logged('Static pod removed from desired set').filter((r) => String(r.pod).includes('remote'))).toEqual([]);
    expect(await running('remote')).toBe(id);
  });

  it('shows container logs with bootlet logs, through the agent and without it', async () => {
    const viaAgent = await run(BOOTLET_EXE, [
      'logs',
      `good-${NODE}`,
      `--root-dir=${h.rootDir}`,
      `--pod-logs-dir=${h.podLogsDir}`,
    ]);
    expect(viaAgent.stdout).toBe('hello from good\n');
    const alone = await run(BOOTLET_EXE, [
      'logs',
      'good',
      `--root-dir=${path.join(h.dir, 'no-agent')}`,
      `--pod-logs-dir=${h.podLogsDir}`,
    ]);
    expect(alone.stdout).toBe('hello from good\n');
    const previous = await waitFor(
      async () => {
        const r = await run(BOOTLET_EXE, [
          'logs',
          'crash',
          '-p',
          `--root-dir=${h.rootDir}`,
          `--pod-logs-dir=${h.podLogsDir}`,
        ]).catch(() => undefined);
        return r?.stdout;
      },
      { timeoutMs: 60_000, what: 'a previous instance of the crashing container' },
    );
    expect(previous).toBe('boom\n');
  });

  it('after a restart with the URL still down keeps its pods, and adopts them when it answers again', async () => {
    const id = await running('remote');
    expect(id).toBeDefined();
    await agent.kill('SIGTERM');
    await notify.waitFor((m) => m.fields.STOPPING === '1', 'STOPPING=1', 10_000);
    agent = h.launch(options());
    await agent.waitForLog(
      (r) => r.msg === 'Pods from staticPodURL keep running until it answers',
      'http pods held',
      60_000,
    );
    await agent.waitForLog((r) => r.msg === 'Manifests read, adopting running pods', 'adoption', 60_000);
    const adoptedAt = agent.records().findIndex((r) => r.msg === 'Manifests read, adopting running pods');
    // After the adoption: the other pods' workers have synced, and the URL has failed twice more.
    await waitFor(
      () =>
        ['good', 'crash'].every((n) =>
          logged('Pod synced', adoptedAt).some((r) => String(r.pod).includes(`${n}-${NODE}`)),
        ),
      { timeoutMs: 60_000, what: 'good and crash synced after the adoption' },
    );
    await failedPolls(2, 'the held pod must outlast them');
    const stoppedRemote = (): Record<string, unknown>[] =>
      agent
        .records()
        .filter((r) => typeof r.msg === 'string' && /stopping it$/.test(r.msg) && String(r.pod).includes('remote'));
    expect(stoppedRemote()).toEqual([]);
    expect(await running('remote')).toBe(id);
    await serve();
    await agent.waitForLog((r) => r.msg === 'Static pod from staticPodURL accepted', 'the URL answering again', 30_000);
    // Its worker has synced it: adopted as it runs, nothing started, killed or created.
    const synced = await agent.waitForLog(
      (r) => r.msg === 'Pod synced' && String(r.pod).includes(`remote-${NODE}`),
      'the remote pod synced by its worker',
      60_000,
    );
    expect(synced).toMatchObject({ started: 0, killed: 0, sandboxCreated: false });
    expect(await running('remote')).toBe(id);
    expect(stoppedRemote()).toEqual([]);
  });

  it('validates manifests with the packaged binary, a big one decoded off the event loop', async () => {
    const dir = path.join(h.dir, 'to-validate');
    fs.mkdirSync(dir, { recursive: true });
    const big = busyboxPod('big', SLEEP_LOOP).replace(
      'metadata: {name: big, namespace: kube-system}',
      `metadata: {name: big, namespace: kube-system, annotations: {blob: "${'x'.repeat(40_000)}"}}`,
    );
    fs.writeFileSync(path.join(dir, 'big.yaml'), big);
    fs.writeFileSync(
      path.join(dir, 'bad.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: [{name: c}]}\n',
    );
    const r = await run(BOOTLET_EXE, ['validate', dir, '--hostname-override', NODE]).then(
      () => ({ code: 0, stdout: '' }),
      (e: { code: number; stdout: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${path.join(dir, 'big.yaml')}: accepted: pod kube-system/big-${NODE}`);
    expect(r.stdout).toMatch(/bad\.yaml: refused: .*image/);
  });
});

// /metrics carries every family the kubelet exposes for what bootlet does, under the kubelet's
// name, type, label names and histogram buckets (test/fixtures/kubelet/metric-families.json,
// written from the kubelet's metrics.go), on the read-only port and the root-only socket alike.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nullLogger } from '../../../src/log/logger.js';
import { AgentMetrics } from '../../../src/metrics/agent-metrics.js';
import { startEndpoints, type RunningEndpoints } from '../../../src/server/endpoints.js';
import { parsePrometheusText, type Family } from '../../support/prom-text.js';
import { freePorts } from '../../support/ports.js';
import { useTmpDir } from '../../support/tmp.js';
import { FakeSource, pendingEntry, runningEntry } from '../server/fake-source.js';

interface Expected {
  name: string;
  type: string;
  labels: string[];
  buckets?: number[];
}

const FIXTURE = JSON.parse(
  fs.readFileSync(path.join(__dirname, '../../fixtures/kubelet/metric-families.json'), 'utf8'),
) as { families: Expected[] };
const tmp = useTmpDir('metrics-families');
let endpoints: RunningEndpoints | undefined;

afterEach(async () => {
  await endpoints?.close();
  endpoints = undefined;
});

function get(target: { url?: string; socketPath?: string }): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const opts = target.socketPath
      ? { socketPath: target.socketPath, path: '/metrics' }
      : new URL(`${target.url}/metrics`);
    http
      .get(opts, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      })
      .on('error', reject);
  });
}

/** Records one of everything, as an agent that started a pod, probed it and talked to an API server would. */
function exercised(source: FakeSource): AgentMetrics {
  const m = new AgentMetrics({ nodeName: 'node1', state: source });
  m.runtimeOperation('run_podsandbox', 0.3, false);
  m.runtimeOperation('pull_image', 2, true);
  m.plegRelist(0.004, 1.0);
  m.podWorkerStep('create', 0.5);
  m.podStarted(3.2);
  m.podStartedSli(1.1, false);
  m.containerStartAttempt('container');
  m.containerStartError('init_container', 'ErrImagePull');
  m.podRestarted(true);
  m.probeResult(
    { probeType: 'Liveness', container: 'app', pod: 'web-node1', namespace: 'default', podUid: 'u1' },
    'successful',
  );
  m.restRequest('201', 'POST', '127.0.0.1:6443');
  m.runtimeLosingSupport();
  return m;
}

function labelNames(f: Family): string[] {
  const names = new Set<string>();
  for (const s of f.samples) for (const k of Object.keys(s.labels)) if (k !== 'le') names.add(k);
  return [...names].sort();
}

function checkFamilies(text: string): void {
  const families = parsePrometheusText(text);
  for (const want of FIXTURE.families) {
    const got = families.get(want.name);
    expect(got, `family ${want.name}`).toBeDefined();
    expect(got!.type, `type of ${want.name}`).toBe(want.type);
    expect(got!.samples.length, `samples of ${want.name}`).toBeGreaterThan(0);
    expect(labelNames(got!), `labels of ${want.name}`).toEqual(want.labels);
    if (want.buckets) {
      const les = [
        ...new Set(got!.samples.filter((s) => s.name === `${want.name}_bucket`).map((s) => Number(s.labels.le))),
      ].filter(Number.isFinite);
      expect(les.length, `buckets of ${want.name}`).toBe(want.buckets.length);
      les.forEach((le, i) => expect(le, `bucket ${i} of ${want.name}`).toBeCloseTo(want.buckets![i]!, 9));
    }
    if (want.name.startsWith('kubelet_') || want.name.startsWith('prober_') || want.name.startsWith('rest_client_'))
      expect(got!.help).toMatch(/^\[ALPHA\] /);
  }
}

describe('kubelet metric families', () => {
  it('are served under the kubelet names, types, labels and buckets on the read-only port and the socket', async () => {
    const source = new FakeSource();
    source.entries = [runningEntry(), pendingEntry()];
    source.unexpectedErrors = () => 2;
    const [port] = await freePorts(1);
    endpoints = await startEndpoints({
      healthzBindAddress: '127.0.0.1',
      healthzPort: 0,
      address: '127.0.0.1',
      readOnlyPort: port!,
      rootDir: path.join(tmp, 'root'),
      syncFrequencyMs: 60_000,
      source,
      metrics: exercised(source),
      logger: nullLogger,
    });
    for (const target of [{ url: endpoints.readOnlyURL }, { socketPath: endpoints.podsSocket }]) {
      const r = await get(target);
      expect(r.status).toBe(200);
      expect(r.type).toBe('text/plain; version=0.0.4; charset=utf-8');
      checkFamilies(r.body);
      expect(r.body).toContain('kubelet_node_name{node="node1"} 1\n');
      expect(r.body).toContain('kubelet_cri_losing_support{version="1.36.0"} 1\n');
      expect(r.body).toContain('kubelet_running_pods 1\n');
      expect(r.body).toContain(
        'kubelet_started_containers_errors_total{container_type="init_container",code="ErrImagePull"} 1\n',
      );
      expect(r.body).toContain('kubelet_restarted_pods_total{static="true"} 1\n');
      expect(r.body).toContain('bootlet_unexpected_errors_total 2\n');
    }
  });

  it("drops a pod's probe series when the pod is gone", async () => {
    const m = exercised(new FakeSource());
    expect(await m.render()).toContain(
      'prober_probe_total{probe_type="Liveness",result="successful",container="app",pod="web-node1",namespace="default",pod_uid="u1"} 1',
    );
    m.forgetPod('u1');
    expect(await m.render()).not.toContain('pod_uid="u1"');
  });

  it('leaves out the event-loop lag monitor and other timers: nothing of the registry runs between scrapes', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const m = new AgentMetrics({ nodeName: 'n' });
    await m.render();
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBe(before);
    expect(await m.render()).not.toMatch(/nodejs_eventloop_lag/);
  });
});

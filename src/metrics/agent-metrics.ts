// The agent's metrics registry: the kubelet's metric names, types, labels and buckets
// (pkg/kubelet/metrics, pkg/kubelet/prober, client-go's rest client metrics) where bootlet does the
// same thing, so kubelet dashboards and alerts read it unchanged. Every server that serves
// /metrics (the read-only port, the root-only socket, the kubelet API port) renders this one
// registry. Parts of the agent never import it: they get plain callbacks (see agent wiring).
// One file each, not prom-client's index (see prom-client-core.d.ts).
import Counter from 'prom-client/lib/counter.js';
import Gauge from 'prom-client/lib/gauge.js';
import Histogram from 'prom-client/lib/histogram.js';
import Registry from 'prom-client/lib/registry.js';
import { ContainerState, PodSandboxState } from '../cri/cri-types.js';
import type { PodStatusEntry } from '../status/status-manager.js';
import { DEF_BUCKETS, POD_STARTUP_BUCKETS, RUNTIME_OPERATION_BUCKETS } from './buckets.js';
import { registerProcessMetrics } from './process-metrics.js';

/** What the gauges read at scrape time. */
export interface NodeStateSource {
  statuses(): readonly PodStatusEntry[];
  sinceLastRelistMs(): number;
  unexpectedErrors?(): number;
  droppedLogLines?(): number;
}

export type ContainerTypeLabel = 'container' | 'init_container' | 'ephemeral_container';
export type ProbeTypeLabel = 'Liveness' | 'Readiness' | 'Startup';
export type ProbeResultLabel = 'successful' | 'failed' | 'unknown';

export interface ProbeSeries {
  readonly probeType: ProbeTypeLabel;
  readonly container: string;
  readonly pod: string;
  readonly namespace: string;
  readonly podUid: string;
}

const CONTAINER_STATE_LABEL: Record<ContainerState, string> = {
  [ContainerState.CONTAINER_CREATED]: 'created',
  [ContainerState.CONTAINER_RUNNING]: 'running',
  [ContainerState.CONTAINER_EXITED]: 'exited',
  [ContainerState.CONTAINER_UNKNOWN]: 'unknown',
};

/** component-base prefixes the help of every ALPHA metric so. */
const alpha = (help: string): string => `[ALPHA] ${help}`;

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface AgentMetricsOptions {
  /** The node's name, the value of kubelet_node_name's `node` label. */
  nodeName?: string;
  state?: NodeStateSource;
  now?: () => number;
}

export class AgentMetrics {
  readonly registry = new Registry();
  private state: NodeStateSource | undefined;
  private readonly now: () => number;
  /** Probe series by pod UID, removed with the pod as the kubelet's probe workers do. */
  private readonly probeSeries = new Map<string, Set<string>>();

  private readonly runtimeOperations: Counter<'operation_type'>;
  private readonly runtimeOperationErrors: Counter<'operation_type'>;
  private readonly runtimeOperationDuration: Histogram<'operation_type'>;
  private readonly plegRelistDuration: Histogram;
  private readonly plegRelistInterval: Histogram;
  private readonly podWorkerDuration: Histogram<'operation_type'>;
  private readonly podStartDuration: Histogram;
  private readonly podStartSliDuration: Histogram<'first_with_network'>;
  private readonly startedContainers: Counter<'container_type'>;
  private readonly startedContainerErrors: Counter<'container_type' | 'code'>;
  private readonly restartedPods: Counter<'static'>;
  private readonly probes: Counter<'probe_type' | 'result' | 'container' | 'pod' | 'namespace' | 'pod_uid'>;
  private readonly restRequests: Counter<'code' | 'method' | 'host'>;
  private readonly criLosingSupport: Gauge<'version'>;

  constructor(opts: AgentMetricsOptions = {}) {
    this.state = opts.state;
    this.now = opts.now ?? Date.now;
    const registers = [this.registry];
    const self = this;

    this.runtimeOperations = new Counter({
      name: 'kubelet_runtime_operations_total',
      help: alpha('Cumulative number of runtime operations by operation type.'),
      labelNames: ['operation_type'],
      registers,
    });
    this.runtimeOperationErrors = new Counter({
      name: 'kubelet_runtime_operations_errors_total',
      help: alpha('Cumulative number of runtime operation errors by operation type.'),
      labelNames: ['operation_type'],
      registers,
    });
    this.runtimeOperationDuration = new Histogram({
      name: 'kubelet_runtime_operations_duration_seconds',
      help: alpha('Duration in seconds of runtime operations. Broken down by operation type.'),
      labelNames: ['operation_type'],
      buckets: [...RUNTIME_OPERATION_BUCKETS],
      registers,
    });
    this.plegRelistDuration = new Histogram({
      name: 'kubelet_pleg_relist_duration_seconds',
      help: alpha('Duration in seconds for relisting pods in PLEG.'),
      buckets: [...DEF_BUCKETS],
      registers,
    });
    this.plegRelistInterval = new Histogram({
      name: 'kubelet_pleg_relist_interval_seconds',
      help: alpha('Interval in seconds between relisting in PLEG.'),
      buckets: [...DEF_BUCKETS],
      registers,
    });
    new Gauge({
      name: 'kubelet_pleg_last_seen_seconds',
      help: alpha('Timestamp in seconds when PLEG was last seen active.'),
      registers,
      collect() {
        const s = self.state;
        if (s) this.set((self.now() - s.sinceLastRelistMs()) / 1000);
      },
    });
    this.podWorkerDuration = new Histogram({
      name: 'kubelet_pod_worker_duration_seconds',
      help: alpha('Duration in seconds to sync a single pod. Broken down by operation type: create, update, or sync'),
      labelNames: ['operation_type'],
      buckets: [...DEF_BUCKETS],
      registers,
    });
    this.podStartDuration = new Histogram({
      name: 'kubelet_pod_start_duration_seconds',
      help: alpha('Duration in seconds from kubelet seeing a pod for the first time to the pod starting to run'),
      buckets: [...POD_STARTUP_BUCKETS],
      registers,
    });
    this.podStartSliDuration = new Histogram({
      name: 'kubelet_pod_start_sli_duration_seconds',
      help: alpha(
        'Duration in seconds to start a pod, excluding time to pull images and run init containers, measured from pod creation timestamp to when all its containers are reported as started and observed via watch',
      ),
      labelNames: ['first_with_network'],
      buckets: [...POD_STARTUP_BUCKETS],
      registers,
    });
    this.startedContainers = new Counter({
      name: 'kubelet_started_containers_total',
      help: alpha('Cumulative number of containers started'),
      labelNames: ['container_type'],
      registers,
    });
    this.startedContainerErrors = new Counter({
      name: 'kubelet_started_containers_errors_total',
      help: alpha('Cumulative number of errors when starting containers'),
      labelNames: ['container_type', 'code'],
      registers,
    });
    this.restartedPods = new Counter({
      name: 'kubelet_restarted_pods_total',
      help: alpha(
        'Number of pods that have been restarted because they were deleted and recreated with the same UID while the kubelet was watching them (common for static pods, extremely uncommon for API pods)',
      ),
      labelNames: ['static'],
      registers,
    });
    this.criLosingSupport = new Gauge({
      name: 'kubelet_cri_losing_support',
      help: alpha(
        'the Kubernetes version that the currently running CRI implementation will lose support on if not upgraded.',
      ),
      labelNames: ['version'],
      registers,
    });
    new Gauge({
      name: 'kubelet_node_name',
      help: alpha("The node's name. The count is always 1."),
      labelNames: ['node'],
      registers,
    }).set({ node: opts.nodeName ?? '' }, 1);
    new Gauge({
      name: 'kubelet_running_pods',
      help: alpha('Number of pods that have a running pod sandbox'),
      registers,
      collect() {
        const entries = self.state?.statuses() ?? [];
        this.set(
          entries.filter((e) => e.runtime?.sandboxes.some((s) => s.state === PodSandboxState.SANDBOX_READY)).length,
        );
      },
    });
    new Gauge({
      name: 'kubelet_running_containers',
      help: alpha('Number of containers currently running'),
      labelNames: ['container_state'],
      registers,
      collect() {
        const counts = new Map<string, number>(Object.values(CONTAINER_STATE_LABEL).map((l) => [l, 0]));
        for (const e of self.state?.statuses() ?? []) {
          for (const c of e.runtime?.containers ?? []) {
            const label = CONTAINER_STATE_LABEL[c.state] ?? 'unknown';
            counts.set(label, (counts.get(label) ?? 0) + 1);
          }
        }
        for (const [state, n] of counts) this.set({ container_state: state }, n);
      },
    });
    this.probes = new Counter({
      name: 'prober_probe_total',
      help: alpha('Cumulative number of a liveness, readiness or startup probe for a container by result.'),
      labelNames: ['probe_type', 'result', 'container', 'pod', 'namespace', 'pod_uid'],
      registers,
    });
    this.restRequests = new Counter({
      name: 'rest_client_requests_total',
      help: alpha('Number of HTTP requests, partitioned by status code, method, and host.'),
      labelNames: ['code', 'method', 'host'],
      registers,
    });
    let reported = 0;
    new Counter({
      name: 'bootlet_unexpected_errors_total',
      help: 'Unhandled promise rejections and uncaught exceptions (bugs) that bootlet logged and survived.',
      registers,
      collect() {
        const total = self.state?.unexpectedErrors?.() ?? 0;
        if (total > reported) this.inc(total - reported);
        reported = Math.max(reported, total);
      },
    });
    let dropped = 0;
    new Counter({
      name: 'bootlet_log_lines_dropped_total',
      help: 'Log lines dropped because stderr was broken (a closed pipe or journal socket).',
      registers,
      collect() {
        const total = self.state?.droppedLogLines?.() ?? 0;
        if (total > dropped) this.inc(total - dropped);
        dropped = Math.max(dropped, total);
      },
    });
    registerProcessMetrics(this.registry);
  }

  /** The node state the gauges read (set once the status manager and the PLEG exist). */
  bind(state: NodeStateSource): void {
    this.state = state;
  }

  /** One CRI call, named as the kubelet's instrumented runtime service names it. */
  runtimeOperation(operationType: string, seconds: number, failed: boolean): void {
    this.runtimeOperations.inc({ operation_type: operationType });
    this.runtimeOperationDuration.observe({ operation_type: operationType }, seconds);
    if (failed) this.runtimeOperationErrors.inc({ operation_type: operationType });
  }

  /** A successful relist; `intervalSeconds` since the start of the one before (undefined for the first). */
  plegRelist(durationSeconds: number, intervalSeconds: number | undefined): void {
    this.plegRelistDuration.observe(durationSeconds);
    if (intervalSeconds !== undefined) this.plegRelistInterval.observe(intervalSeconds);
  }

  /** One pod worker step: create, update, sync, kill or terminated, as the kubelet labels them. */
  podWorkerStep(operationType: string, seconds: number): void {
    this.podWorkerDuration.observe({ operation_type: operationType }, seconds);
  }

  podStarted(seconds: number): void {
    this.podStartDuration.observe(seconds);
  }

  podStartedSli(seconds: number, firstWithNetwork: boolean): void {
    this.podStartSliDuration.observe({ first_with_network: firstWithNetwork ? 'true' : '' }, seconds);
  }

  containerStartAttempt(containerType: ContainerTypeLabel): void {
    this.startedContainers.inc({ container_type: containerType });
  }

  /** `code` is the waiting reason the failure leaves (ErrImagePull, CreateContainerError, ...). */
  containerStartError(containerType: ContainerTypeLabel, code: string): void {
    this.startedContainerErrors.inc({ container_type: containerType, code });
  }

  podRestarted(isStatic = true): void {
    this.restartedPods.inc({ static: String(isStatic) });
  }

  probeResult(s: ProbeSeries, result: ProbeResultLabel): void {
    const labels = {
      probe_type: s.probeType,
      result,
      container: s.container,
      pod: s.pod,
      namespace: s.namespace,
      pod_uid: s.podUid,
    };
    this.probes.inc(labels);
    let keys = this.probeSeries.get(s.podUid);
    if (!keys) this.probeSeries.set(s.podUid, (keys = new Set()));
    keys.add(JSON.stringify(labels));
  }

  /** The pod is gone: its probe series go too, so a node that churns pods does not grow the registry. */
  forgetPod(podUid: string): void {
    for (const key of this.probeSeries.get(podUid) ?? []) this.probes.remove(JSON.parse(key) as Record<string, string>);
    this.probeSeries.delete(podUid);
  }

  /** One API server request: `code` the status code, or `<error>` when there was no answer. */
  restRequest(code: string, method: string, host: string): void {
    this.restRequests.inc({ code, method, host });
  }

  /**
   * The runtime answered RuntimeConfig UNIMPLEMENTED (containerd 1.x): the kubelet 1.34 names 1.36.0,
   * the release without support for it (getCgroupDriverFromCRI).
   */
  runtimeLosingSupport(version = '1.36.0'): void {
    this.criLosingSupport.set({ version }, 1);
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}

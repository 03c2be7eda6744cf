// The probes of every pod: one ProbeWorker per (pod UID, container name, probe type), the results
// per container ID, and events for the pod worker. It reports; the pod worker acts (kills a
// container whose liveness failed, sets readiness in the status).
import type { Container, Pod, Probe } from 'kubernetes-types/core/v1';
import type { RuntimeService } from '../cri/cri-types.js';
import { nullLogger, type Logger } from '../log/logger.js';
import { DriftRecorder } from './drift.js';
import { probeTiming } from './probe-spec.js';
import { ProbeWorker, type ProbeRecord } from './probe-worker.js';
import { realHandlers, runProbe, type ProbeHandlers } from './run-probe.js';
import type { DriftStats, ProbeFailureEvent, ProbeResultEvent, ProbeType } from './types.js';
import { restartableInitContainers, restartsAfterProbeFailure } from '../k8s/restart.js';

export interface ProberManagerOptions {
  runtime: Pick<RuntimeService, 'execSync'>;
  logger?: Logger;
  /** Replaces the real exec/http/tcp/grpc handlers (tests). */
  handlers?: ProbeHandlers;
  now?: () => number;
  random?: () => number;
  /** Each probe that ran and gave a result (prober_probe_total). */
  onProbeRun?: (e: ProbeRunEvent) => void;
  /** What the API server showed before the agent started: a container reported started stays started. */
  reported?: { containerStarted(uid: string, containerName: string, containerId: string): boolean };
}

export interface ProbeRunEvent {
  readonly podUid: string;
  readonly podName: string;
  readonly namespace: string;
  readonly containerName: string;
  readonly probeType: ProbeType;
  readonly result: 'success' | 'failure';
}

interface ContainerProbes {
  spec: Container;
  containerId?: string;
  running: boolean;
  workers: Map<ProbeType, ProbeWorker>;
}

interface PodProbes {
  pod: Pod;
  podIP: string;
  containers: Map<string, ContainerProbes>;
}

const TYPES: ProbeType[] = ['startup', 'liveness', 'readiness'];
const TITLE: Record<ProbeType, string> = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };

function probeOf(c: Container, type: ProbeType): Probe | undefined {
  return type === 'liveness' ? c.livenessProbe : type === 'readiness' ? c.readinessProbe : c.startupProbe;
}

/** Regular containers and sidecars (restartable init containers) are the ones probed. */
function probedContainers(pod: Pod): Container[] {
  return [...restartableInitContainers(pod.spec?.initContainers), ...(pod.spec?.containers ?? [])];
}

export class ProberManager {
  private readonly pods = new Map<string, PodProbes>();
  private readonly resultListeners = new Set<(e: ProbeResultEvent) => void>();
  private readonly failureListeners = new Set<(e: ProbeFailureEvent) => void>();
  private readonly driftRecorder = new DriftRecorder();
  private readonly handlers: ProbeHandlers;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly startMs: number;

  constructor(private readonly opts: ProberManagerOptions) {
    this.handlers = opts.handlers ?? realHandlers(opts.runtime);
    this.logger = opts.logger ?? nullLogger;
    this.now = opts.now ?? (() => Date.now());
    this.startMs = this.now();
  }

  /** Creates the probe workers of a pod; they wait for containerStarted. Again for the same UID only updates the pod IP. */
  addPod(pod: Pod, podIP: string): void {
    const uid = pod.metadata?.uid ?? '';
    const existing = this.pods.get(uid);
    if (existing) {
      existing.podIP = podIP;
      return;
    }
    const entry: PodProbes = { pod, podIP, containers: new Map() };
    this.pods.set(uid, entry);
    for (const c of probedContainers(pod)) {
      const cp: ContainerProbes = { spec: c, running: false, workers: new Map() };
      entry.containers.set(c.name, cp);
      for (const type of TYPES) {
        const probe = probeOf(c, type);
        if (probe) cp.workers.set(type, this.newWorker(entry, cp, type, probe));
      }
    }
  }

  /** Stops the pod's workers and forgets its results. */
  removePod(uid: string): void {
    const entry = this.pods.get(uid);
    if (!entry) return;
    for (const cp of entry.containers.values()) for (const w of cp.workers.values()) w.stop();
    this.pods.delete(uid);
  }

  /**
   * The pod is terminating: as the kubelet, liveness and startup stop (and count as passed so that
   * nothing kills a container that is being stopped anyway); readiness goes on.
   */
  stopLivenessAndStartup(uid: string): void {
    for (const cp of this.pods.get(uid)?.containers.values() ?? []) {
      for (const type of ['liveness', 'startup'] as const) {
        const w = cp.workers.get(type);
        if (w) {
          w.stop();
          cp.workers.delete(type);
        }
      }
    }
  }

  /** A container runs (just started, or found running after an agent restart). A new ID starts over. */
  containerStarted(uid: string, containerName: string, containerId: string, startedAtMs: number): void {
    const cp = this.pods.get(uid)?.containers.get(containerName);
    if (!cp) return;
    cp.containerId = containerId;
    cp.running = true;
    for (const w of cp.workers.values()) w.containerStarted(containerId, startedAtMs);
  }

  /** The container exited or was removed: its probes pause until the next containerStarted. */
  containerStopped(uid: string, containerName: string): void {
    const cp = this.pods.get(uid)?.containers.get(containerName);
    if (!cp) return;
    cp.running = false;
    for (const w of cp.workers.values()) w.containerStopped();
  }

  /**
   * Whether the container is started: running and its startup probe passed (or it has none).
   * undefined for a pod or container the manager does not know, and for a container found running
   * at the agent's start whose startup probe has no result yet (the status keeps what it had).
   */
  started(uid: string, containerName: string): boolean | undefined {
    const cp = this.pods.get(uid)?.containers.get(containerName);
    if (!cp) return undefined;
    return this.isStarted(cp);
  }

  /**
   * Whether the container is ready: started, and its readiness probe's last result is success (or
   * it has none). Before the first success a probed container is not ready, unless it was found
   * running at the agent's start: then undefined until its probe has a result.
   */
  readiness(uid: string, containerName: string): boolean | undefined {
    const cp = this.pods.get(uid)?.containers.get(containerName);
    if (!cp) return undefined;
    const started = this.isStarted(cp);
    if (started === false) return false;
    const w = cp.workers.get('readiness');
    if (!w) return started;
    if (w.containerId !== cp.containerId) return false;
    const result = w.result;
    return result === undefined ? undefined : started === true && result === 'success';
  }

  /**
   * Which probe, if any, has failed for this very container (liveness or startup at its failure
   * threshold): what compute-actions asks when deciding to kill it, as the kubelet reads its
   * liveness and startup results. undefined when none has, or the container is another one.
   */
  failedProbe(uid: string, containerName: string, containerId: string): 'liveness' | 'startup' | undefined {
    const cp = this.pods.get(uid)?.containers.get(containerName);
    for (const type of ['liveness', 'startup'] as const) {
      const w = cp?.workers.get(type);
      if (w && w.containerId === containerId && w.result === 'failure') return type;
    }
    return undefined;
  }

  /** Every recorded result (`changed` says whether it differs from the previous one). */
  onResult(listener: (e: ProbeResultEvent) => void): () => void {
    this.resultListeners.add(listener);
    return () => this.resultListeners.delete(listener);
  }

  /** Liveness or startup failed (failureThreshold consecutive failures): the container must go. */
  onFailure(listener: (e: ProbeFailureEvent) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  /** How late scheduled probes started, over the last 10 000 ticks. */
  drift(): DriftStats {
    return this.driftRecorder.stats();
  }

  resetDrift(): void {
    this.driftRecorder.reset();
  }

  workerCount(): number {
    let n = 0;
    for (const p of this.pods.values()) for (const cp of p.containers.values()) n += cp.workers.size;
    return n;
  }

  /** Stops everything (agent shutdown). */
  stop(): void {
    for (const uid of [...this.pods.keys()]) this.removePod(uid);
  }

  private isStarted(cp: ContainerProbes): boolean | undefined {
    if (!cp.running || cp.containerId === undefined) return false;
    const w = cp.workers.get('startup');
    if (!w) return true;
    if (w.containerId !== cp.containerId) return false;
    const result = w.result;
    if (result === undefined) return w.startedBeforeRestart ? true : undefined;
    return result === 'success';
  }

  private newWorker(entry: PodProbes, cp: ContainerProbes, type: ProbeType, probe: Probe): ProbeWorker {
    const timing = probeTiming(probe, type);
    const uid = entry.pod.metadata?.uid ?? '';
    const log = this.logger.with({
      pod: `${entry.pod.metadata?.namespace ?? 'default'}/${entry.pod.metadata?.name ?? ''}`,
      podUID: uid,
      containerName: cp.spec.name,
      probeType: TITLE[type],
    });
    return new ProbeWorker({
      probeType: type,
      timing,
      agentStartMs: this.startMs,
      drift: this.driftRecorder,
      now: this.opts.now,
      random: this.opts.random,
      isStarted: () => this.isStarted(cp) === true,
      reportedStarted: (containerId) => this.opts.reported?.containerStarted(uid, cp.spec.name, containerId) === true,
      probe: (containerId) =>
        runProbe(this.handlers, probe, { container: cp.spec, containerId, podIP: entry.podIP }, timing.timeoutSeconds),
      onRecord: (rec) => this.recorded(entry, cp, type, probe, rec, log),
      onRun: (result) =>
        this.opts.onProbeRun?.({
          podUid: uid,
          podName: entry.pod.metadata?.name ?? '',
          namespace: entry.pod.metadata?.namespace ?? 'default',
          containerName: cp.spec.name,
          probeType: type,
          result,
        }),
      onError: (containerId, output, repeated) => {
        const msg = `${TITLE[type]} probe errored and resulted in unknown state: ${output}`;
        if (repeated) log.v(2).info('Probe errored', { containerID: containerId, output, message: msg });
        else log.warn('Probe errored', { containerID: containerId, output, event: 'Unhealthy', message: msg });
      },
      onFailureBelowThreshold: (containerId, output, run) =>
        log
          .v(2)
          .info('Probe failed', { containerID: containerId, output, run, failureThreshold: timing.failureThreshold }),
    });
  }

  private recorded(
    entry: PodProbes,
    cp: ContainerProbes,
    type: ProbeType,
    probe: Probe,
    rec: ProbeRecord,
    log: Logger,
  ): void {
    const uid = entry.pod.metadata?.uid ?? '';
    if (rec.changed) {
      if (rec.result === 'failure')
        log.warn('Probe failed', {
          containerID: rec.containerId,
          output: rec.output,
          event: 'Unhealthy',
          message: `${TITLE[type]} probe failed: ${rec.output}`,
        });
      else log.info('Probe succeeded', { containerID: rec.containerId, output: rec.output });
    }
    if (rec.firstWarning)
      log.warn('Probe succeeded with a warning', {
        containerID: rec.containerId,
        event: 'ProbeWarning',
        message: `${TITLE[type]} probe warning: ${rec.output}`,
      });
    const event: ProbeResultEvent = {
      podUid: uid,
      containerName: cp.spec.name,
      containerId: rec.containerId,
      probeType: type,
      result: rec.result,
      output: rec.output,
      changed: rec.changed,
    };
    for (const l of this.resultListeners) l(event);
    // Readiness need not wait a whole period once the container has started (the kubelet triggers it too).
    if (type === 'startup' && rec.result === 'success' && rec.changed) cp.workers.get('readiness')?.trigger();
    if (type !== 'readiness' && rec.result === 'failure') {
      const restarts = restartsAfterProbeFailure(cp.spec, entry.pod.spec?.restartPolicy);
      const failure: ProbeFailureEvent = {
        type: type === 'liveness' ? 'livenessFailed' : 'startupFailed',
        podUid: uid,
        containerName: cp.spec.name,
        containerId: rec.containerId,
        message: `Container ${cp.spec.name} failed ${type} probe${restarts ? ', will be restarted' : ''}`,
        reason: type === 'liveness' ? 'LivenessProbe' : 'StartupProbe',
        output: rec.output,
        terminationGracePeriodSeconds: probe.terminationGracePeriodSeconds,
      };
      for (const l of this.failureListeners) l(failure);
    }
  }
}

// One probe of one container of one pod (liveness, readiness or startup): its own timer, its
// thresholds, and the result it holds for the current container. It never runs two probes at once,
// and nothing it does waits for another worker.
import type { DriftRecorder } from './drift.js';
import type { ProbeTiming } from './probe-spec.js';
import type { ProbeOutcome, ProbeState, ProbeType } from './types.js';
import { errorMessage } from '../util/error-message.js';

export interface ProbeRecord {
  containerId: string;
  result: 'success' | 'failure';
  output: string;
  changed: boolean;
  /** A success that carries a warning (redirect to another host), seen first for this container. */
  firstWarning: boolean;
}

export interface ProbeWorkerOptions {
  probeType: ProbeType;
  timing: ProbeTiming;
  /** Runs one probe execution against the container. */
  probe(containerId: string): Promise<ProbeOutcome>;
  /** Liveness and readiness wait until this is true (startup probe passed, or none). */
  isStarted(): boolean;
  /** Whether the API server showed this container started before the agent started (KEP-4781). */
  reportedStarted?(containerId: string): boolean;
  /** A result was recorded: a threshold was reached. */
  onRecord(rec: ProbeRecord): void;
  /** Each probe that ran and gave a result, before thresholds (prober_probe_total). */
  onRun?(result: 'success' | 'failure'): void;
  /** A probe could not be run; its result is thrown away. `repeated` when the same as last time. */
  onError?(containerId: string, output: string, repeated: boolean): void;
  /** A failure below the failure threshold (the kubelet still reports each as `Unhealthy`). */
  onFailureBelowThreshold?(containerId: string, output: string, run: number): void;
  drift?: DriftRecorder;
  /** When the agent started: workers that begin within one period of it spread their first probe. */
  agentStartMs: number;
  now?: () => number;
  random?: () => number;
}

/** The kubelet's result before any probe ran: not ready, alive, start unknown. */
const INITIAL: Record<ProbeType, ProbeState> = { readiness: 'failure', liveness: 'success', startup: 'unknown' };

export class ProbeWorker {
  private readonly now: () => number;
  private readonly random: () => number;
  private containerIdValue: string | undefined;
  private startedAtMs = 0;
  private running = false;
  private stopped = false;
  private state: ProbeState;
  private lastRaw: 'success' | 'failure' | undefined;
  private run = 0;
  /** After a liveness or startup failure: no probing until a new container appears. */
  private onHold = false;
  /**
   * The container was running before the agent started and no result has been recorded for it
   * since: it holds no initial result, and the status keeps what was reported for it before the
   * restart (KEP-4781, the kubelet of 1.35 with ChangeContainerStatusOnKubeletRestart off).
   */
  private survivedRestart = false;
  private probing = false;
  /** A tick came while a probe was in flight: run it when that probe returns. */
  private pending = false;
  private timer: NodeJS.Timeout | undefined;
  private dueMs = 0;
  private everStarted = false;
  private lastError: string | undefined;
  private warned = false;

  constructor(private readonly opts: ProbeWorkerOptions) {
    this.now = opts.now ?? (() => Date.now());
    this.random = opts.random ?? Math.random;
    this.state = INITIAL[opts.probeType];
  }

  get probeType(): ProbeType {
    return this.opts.probeType;
  }

  get containerId(): string | undefined {
    return this.containerIdValue;
  }

  /**
   * The result held for the current container; undefined before any container was seen, and for a
   * container found running at the agent's start until a threshold is reached for it.
   */
  get result(): ProbeState | undefined {
    return this.containerIdValue === undefined || this.survivedRestart ? undefined : this.state;
  }

  /**
   * A startup probe's container found running at the agent's start that the API server showed
   * started: as the kubelet of 1.35, it counts as started and is not probed for startup again.
   */
  get startedBeforeRestart(): boolean {
    const id = this.containerIdValue;
    return id !== undefined && this.survivedRestart && this.opts.reportedStarted?.(id) === true;
  }

  get isRunning(): boolean {
    return this.running && !this.stopped;
  }

  /**
   * A container (new or adopted) runs. A different ID starts over from the initial result. The first
   * probe is due at the end of the initial delay counted from the container's start, and, when the
   * agent itself just started, after a random part of the period so that adopted pods do not all
   * probe at once.
   */
  containerStarted(containerId: string, startedAtMs: number): void {
    if (this.stopped) return;
    if (containerId === this.containerIdValue && this.running) return;
    const isNew = containerId !== this.containerIdValue;
    this.containerIdValue = containerId;
    this.startedAtMs = startedAtMs;
    this.running = true;
    if (isNew) {
      this.state = INITIAL[this.opts.probeType];
      this.survivedRestart = startedAtMs < this.opts.agentStartMs;
      this.lastRaw = undefined;
      this.run = 0;
      this.onHold = false;
      this.lastError = undefined;
      this.warned = false;
    }
    const now = this.now();
    const jitter =
      !this.everStarted && now - this.opts.agentStartMs < this.opts.timing.periodMs
        ? this.random() * this.opts.timing.periodMs
        : 0;
    this.everStarted = true;
    this.schedule(Math.max(now + jitter, startedAtMs + this.opts.timing.initialDelayMs));
  }

  /** The container is no longer running: probing pauses until a container starts again. */
  containerStopped(): void {
    this.running = false;
    this.clearTimer();
  }

  /** Probe now, out of schedule (readiness right after startup succeeded). */
  trigger(): void {
    if (!this.isRunning || this.onHold) return;
    if (this.probing) {
      this.pending = true;
      return;
    }
    this.clearTimer();
    this.dueMs = this.now();
    void this.tick();
  }

  /** For good; the worker's result stays readable. */
  stop(): void {
    this.stopped = true;
    this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(dueMs: number, measured = true): void {
    this.clearTimer();
    this.dueMs = dueMs;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        if (measured) this.opts.drift?.record(dueMs, this.now());
        void this.tick();
      },
      Math.max(0, dueMs - this.now()),
    );
  }

  /** The next tick on this worker's grid after now; ticks missed by a slow probe are skipped. */
  private scheduleNext(): void {
    const period = this.opts.timing.periodMs;
    const now = this.now();
    let next = this.dueMs + period;
    if (next <= now) next += Math.ceil((now - next) / period) * period;
    if (next <= now) next += period;
    this.schedule(next);
  }

  private async tick(): Promise<void> {
    if (!this.isRunning || this.onHold) return;
    if (this.probing) {
      this.pending = true;
      return;
    }
    const readyAt = this.startedAtMs + this.opts.timing.initialDelayMs;
    if (this.now() < readyAt) {
      this.schedule(readyAt, false);
      return;
    }
    if (this.opts.probeType === 'startup') {
      // Once started, a container is not probed for startup again; a new container is.
      if (this.state === 'success' || this.startedBeforeRestart) return;
    } else if (!this.opts.isStarted()) {
      this.scheduleNext();
      return;
    }
    const id = this.containerIdValue!;
    this.probing = true;
    let outcome: ProbeOutcome;
    try {
      outcome = await this.opts.probe(id);
    } catch (err) {
      outcome = { result: 'unknown', output: errorMessage(err) };
    } finally {
      this.probing = false;
    }
    // The container changed or stopped meanwhile: this result is about one that is gone.
    if (id === this.containerIdValue && this.isRunning) this.record(id, outcome);
    if (this.pending) {
      this.pending = false;
      this.clearTimer();
      this.dueMs = this.now();
      void this.tick();
      return;
    }
    if (id !== this.containerIdValue || !this.isRunning || this.timer) return;
    if (this.onHold || (this.opts.probeType === 'startup' && this.state === 'success')) return;
    this.scheduleNext();
  }

  private record(id: string, o: ProbeOutcome): void {
    if (o.result === 'unknown') {
      this.opts.onError?.(id, o.output, o.output === this.lastError);
      this.lastError = o.output;
      return;
    }
    this.lastError = undefined;
    this.opts.onRun?.(o.result);
    if (o.result === this.lastRaw) this.run++;
    else {
      this.lastRaw = o.result;
      this.run = 1;
    }
    const t = this.opts.timing;
    if (o.result === 'failure' && this.run < t.failureThreshold) {
      this.opts.onFailureBelowThreshold?.(id, o.output, this.run);
      return;
    }
    if (o.result === 'success' && this.run < t.successThreshold) return;
    const changed = this.state !== o.result || this.survivedRestart;
    this.state = o.result;
    this.survivedRestart = false;
    const firstWarning = o.result === 'success' && o.warning === true && !this.warned;
    if (firstWarning) this.warned = true;
    this.opts.onRecord({ containerId: id, result: o.result, output: o.output, changed, firstWarning });
    if (o.result === 'failure' && this.opts.probeType !== 'readiness') {
      this.onHold = true;
      this.run = 0;
      this.clearTimer();
    }
  }
}

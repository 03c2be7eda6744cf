// The kubelet's node shutdown manager: holds a logind delay lock while the node runs; on
// PrepareForShutdown(true) stops the pods in priority order, waits for their final statuses to
// reach the API server, then lets the shutdown go on; on PrepareForShutdown(false) brings the
// node back. The link to logind is made again (1 s, doubling to 30 s) whenever it is lost.
import type { Logger } from '../log/logger.js';
import { InhibitLock, type InhibitLockOptions } from './inhibit-lock.js';
import { Logind } from './logind.js';
import { writeLogindDropIn } from './logind-dropin.js';
import { periodRequestedSeconds, type ShutdownPriorityPeriod } from './shutdown-groups.js';
import { stopInOrder, type ShutdownTarget, type StoppedPod } from './stop-in-order.js';
import { DbusConnection } from '../dbus/dbus-connection.js';
import { errorMessage } from '../util/error-message.js';

/** The pod status the kubelet gives a pod it stopped for a node shutdown. */
export const NODE_SHUTDOWN_REASON = 'Terminated';
export const NODE_SHUTDOWN_MESSAGE = 'Pod was terminated in response to imminent node shutdown.';
/** ShutdownStatus's error: the Ready condition's message while the node shuts down. */
export const NODE_SHUTTING_DOWN = 'node is shutting down';

const RECONNECT_MIN_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;
/** How long the final statuses may take to reach the API server before the lock goes anyway. */
const FLUSH_TIMEOUT_MS = 5_000;

export interface NodeShutdownDeps {
  /** The pods the agent runs now. */
  runningPods(): ShutdownTarget[];
  /** Stops one pod through the pod workers; resolves once it has stopped. */
  stopPod(target: ShutdownTarget, graceSeconds: number): Promise<void>;
  /** The shutdown was cancelled: start the stopped pods again. */
  restorePods(): void;
  /** The node's Ready condition (and nothing new is started) follows this. */
  setShuttingDown(on: boolean): void;
  /** Resolves once these pods' final statuses, and the node's, are in the API server (or there is none). */
  flush(uids: readonly string[], timeoutMs: number): Promise<void>;
  /** A Node event (reason NodeShutdown). */
  nodeEvent?(message: string): void;
  logger: Logger;
}

export interface NodeShutdownOptions {
  periods: readonly ShutdownPriorityPeriod[];
  busSocket: string;
  logindConfDir?: string;
  inhibit?: InhibitLockOptions;
}

/** What the last shutdown did (for the log and tests). */
export interface ShutdownReport {
  readonly signalAtMs: number;
  readonly releasedAtMs: number;
  readonly pods: readonly StoppedPod[];
  readonly graceUsedSeconds: number;
}

export class NodeShutdownManager {
  private bus: DbusConnection | undefined;
  private logind: Logind | undefined;
  private lock: InhibitLock | undefined;
  private shuttingDown = false;
  private processing: Promise<void> | undefined;
  private stopped = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private lastReport: ShutdownReport | undefined;
  private readonly logger: Logger;

  constructor(
    private readonly opts: NodeShutdownOptions,
    private readonly deps: NodeShutdownDeps,
  ) {
    this.logger = deps.logger.with({ component: 'nodeshutdown' });
  }

  start(): void {
    this.logger.info('Creating node shutdown manager', { periods: JSON.stringify(this.opts.periods) });
    void this.connect();
  }

  isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  report(): ShutdownReport | undefined {
    return this.lastReport;
  }

  lockHeld(): boolean {
    return this.lock?.held ?? false;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    try {
      const bus = await DbusConnection.connect(this.opts.busSocket, { peer: 'the system bus', hello: true });
      if (this.stopped) return bus.close();
      this.bus = bus;
      const logind = new Logind(bus, this.logger);
      this.logind = logind;
      bus.onClose((err) => this.lost(err));
      await this.ensureInhibitDelay(logind);
      await logind.watchPrepareForShutdown((active) => this.onPrepareForShutdown(active));
      if (!this.shuttingDown) await this.acquireLock();
      this.retryMs = RECONNECT_MIN_MS;
      this.logger.info('Watching logind for node shutdown', {
        inhibitDelay: `${this.opts.periods.length ? periodRequestedSeconds(this.opts.periods) : 0}s`,
      });
    } catch (err) {
      this.logger.error('Unable to watch the node for shutdown events', { err: errorMessage(err) });
      this.bus?.close();
      this.scheduleReconnect();
    }
  }

  private lost(err: Error): void {
    if (this.stopped) return;
    this.logger.warn('Lost the system bus, watching for node shutdown again', { err: err.message });
    this.bus = undefined;
    this.logind = undefined;
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(RECONNECT_MAX_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  /** As the kubelet: a logind that would not wait long enough is given a drop-in and told to reload. */
  private async ensureInhibitDelay(logind: Logind): Promise<void> {
    const requestedMs = periodRequestedSeconds(this.opts.periods) * 1000;
    const current = await logind.inhibitDelayMaxMs();
    if (requestedMs <= current) return;
    const file = writeLogindDropIn(requestedMs / 1000, this.opts.logindConfDir);
    await logind.reloadConfig();
    // logind re-reads its files after the signal; give it a moment to do so.
    let updated = current;
    for (let i = 0; i < 20 && updated < requestedMs; i++) {
      await new Promise((r) => setTimeout(r, 100));
      updated = await logind.inhibitDelayMaxMs();
    }
    if (updated < requestedMs) {
      throw new Error(
        `node shutdown manager was unable to update logind InhibitDelayMaxSec to ${requestedMs / 1000}s (ShutdownGracePeriod), current value of InhibitDelayMaxSec (${updated / 1000}s) is less than requested ShutdownGracePeriod`,
      );
    }
    this.logger.info('Raised logind InhibitDelayMaxSec', { file, inhibitDelayMaxSec: requestedMs / 1000 });
  }

  private async acquireLock(): Promise<void> {
    if (this.lock?.held || !this.logind) return;
    this.lock = await InhibitLock.take(this.logind, this.opts.inhibit);
    this.logger.info('Holding a shutdown delay lock', {});
  }

  private onPrepareForShutdown(active: boolean): void {
    this.logger.info('Shutdown manager detected new shutdown event', { event: active ? 'shutdown' : 'cancelled' });
    this.deps.nodeEvent?.(
      active ? 'Shutdown manager detected shutdown event' : 'Shutdown manager detected shutdown cancellation',
    );
    if (active) {
      if (this.shuttingDown) return;
      this.shuttingDown = true;
      this.deps.setShuttingDown(true);
      this.processing = this.processShutdown().catch((err: unknown) =>
        this.logger.error('Shutdown manager failed processing the shutdown', { err: String(err) }),
      );
      return;
    }
    if (!this.shuttingDown) return; // nothing was stopped: nothing to bring back
    this.shuttingDown = false;
    void (this.processing ?? Promise.resolve()).then(async () => {
      if (this.shuttingDown) return; // a new shutdown began meanwhile
      this.deps.setShuttingDown(false);
      this.deps.restorePods();
      await this.acquireLock().catch((err: unknown) => {
        this.logger.error('Unable to take the shutdown delay lock again', { err: errorMessage(err) });
        this.bus?.close();
      });
    });
  }

  private async processShutdown(): Promise<void> {
    const signalAtMs = Date.now();
    const targets = this.deps.runningPods();
    try {
      const pods = await stopInOrder(this.opts.periods, targets, {
        stopPod: (t, g) => this.deps.stopPod(t, g),
        logger: this.logger,
      });
      await this.deps
        .flush(
          targets.map((t) => t.uid),
          FLUSH_TIMEOUT_MS,
        )
        .catch((err: unknown) =>
          this.logger.warn('Final pod statuses not all posted before the shutdown', { err: String(err) }),
        );
      const graceUsedSeconds =
        new Set(pods.map((p) => p.priority)).size === 0
          ? 0
          : this.opts.periods
              .filter((p) => pods.some((x) => x.priority === p.priority))
              .reduce((s, p) => s + p.shutdownGracePeriodSeconds, 0);
      this.lastReport = { signalAtMs, releasedAtMs: Date.now(), pods, graceUsedSeconds };
    } finally {
      // The lock goes as systemd-inhibit's child reads the end of its input and exits: logind goes on
      // at once. systemd-inhibit's own exit can come seconds later on a node already going down (it
      // leaves the bus last), so that is waited for after saying so, not before.
      const released = this.lock?.release();
      this.logger.info('Shutdown manager completed processing shutdown event, node will shutdown shortly', {
        tookMs: Date.now() - signalAtMs,
      });
      await released;
    }
  }

  /** Stops watching; releases the lock (an agent that is stopped holds no shutdown back). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.bus?.close();
    await this.lock?.release();
  }
}

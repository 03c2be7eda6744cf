// The agent under systemd (Type=notify): STATUS while it starts, READY=1 once every static pod
// found at start has had its first sync, STATUS= kept current after that, WATCHDOG=1 while healthy
// (WatchdogSec=), STOPPING=1 on the way out. Without NOTIFY_SOCKET none of this exists and the
// agent runs exactly as before.
import type { Logger } from '../log/logger.js';
import { isActive } from '../podworkers/pod-states.js';
import type { PodWorkerSnapshot } from '../podworkers/snapshot.js';
import type { PodStatusEntry } from '../status/status-manager.js';
import { notifierFromEnv, type NotifySender } from '../systemd/notify.js';
import { startupProgress, type PodView } from '../systemd/startup-progress.js';
import { Watchdog, watchdogUsecFromEnv } from '../systemd/watchdog.js';
import { formatDuration } from '../util/duration.js';

export interface SystemdLinkOptions {
  env: NodeJS.ProcessEnv;
  logger: Logger;
  workers(): readonly PodWorkerSnapshot[];
  status(uid: string): PodStatusEntry | undefined;
  /** Subscribes to status changes. */
  onStatusChange(listener: () => void): void;
  /** Why the sync loop or the PLEG is unhealthy, or undefined. */
  health(): string | undefined;
  /**
   * READY=1 is sent at the latest this long after the sources were read, even if a pod's first
   * sync has not finished (an image pull that hangs): a stuck pod must not hold `systemctl
   * restart` (and kubeadm, which runs it) forever. STATUS still names it.
   */
  readyTimeoutMs?: number;
  now?: () => number;
  sender?: NotifySender;
}

export interface SystemdLink {
  /** The sources have been read once: these are the static pods found at start. */
  sourcesReady(initialUids: readonly string[]): void;
  stop(): Promise<void>;
}

const DEFAULT_READY_TIMEOUT_MS = 4 * 60_000;
/** STATUS follows status changes at most this often. */
const STATUS_SETTLE_MS = 250;
/** Until READY, progress is looked at this often too (a first sync that ends without a status change). */
const STARTUP_POLL_MS = 2_000;
const STOP_FLUSH_MS = 3_000;

export function startSystemdLink(o: SystemdLinkOptions): SystemdLink | undefined {
  const notifier = notifierFromEnv(o.env, o.logger, o.sender);
  const usec = watchdogUsecFromEnv(o.env);
  // Children (mount helpers, hooks) must not talk to systemd in our name.
  delete o.env.NOTIFY_SOCKET;
  delete o.env.WATCHDOG_USEC;
  delete o.env.WATCHDOG_PID;
  if (!notifier) return undefined;
  const now = o.now ?? Date.now;
  const log = o.logger.with({ component: 'systemd' });
  let initial: Set<string> | undefined;
  let ready = false;
  let lastStatus = '';
  let settle: NodeJS.Timeout | undefined;
  let poll: NodeJS.Timeout | undefined;
  let readyTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  const views = (): PodView[] =>
    o
      .workers()
      .filter((w) => !w.orphan && isActive(w) && w.pod)
      .map((w) => {
        const entry = o.status(w.uid);
        return {
          uid: w.uid,
          name: w.pod!.metadata.name,
          pod: entry ? { ...entry.pod, status: entry.status } : undefined,
          synced: w.lastSync !== undefined,
        };
      });

  const update = (force = false): void => {
    settle = undefined;
    if (stopped || !initial) return;
    const progress = startupProgress(initial, views(), now());
    const becameReady = !ready && (progress.ready || force);
    if (becameReady) {
      ready = true;
      if (poll) clearInterval(poll);
      if (readyTimer) clearTimeout(readyTimer);
      poll = readyTimer = undefined;
      if (progress.ready)
        log.info('Every static pod found at start has been synced; telling systemd the agent is ready', {
          status: progress.status,
        });
      else
        log.warn(
          'Telling systemd the agent is ready although not every static pod found at start has been synced yet',
          { status: progress.status, after: formatDuration(o.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS) },
        );
      void notifier.notify({ READY: '1', STATUS: progress.status });
      lastStatus = progress.status;
      return;
    }
    if (progress.status !== lastStatus) {
      lastStatus = progress.status;
      void notifier.notify({ STATUS: progress.status });
    }
  };

  const soon = (): void => {
    if (!settle && !stopped) settle = setTimeout(() => update(), STATUS_SETTLE_MS);
  };

  void notifier.notify({ STATUS: 'Reading static pod manifests' });
  o.onStatusChange(soon);
  const watchdog =
    usec === undefined
      ? undefined
      : new Watchdog({ usec, health: o.health, send: () => void notifier.notify({ WATCHDOG: '1' }), logger: log });
  if (watchdog) {
    watchdog.start();
    log.info('systemd watchdog enabled', { interval: formatDuration(watchdog.intervalMs) });
  }

  return {
    sourcesReady(initialUids) {
      if (initial) return;
      initial = new Set(initialUids);
      poll = setInterval(() => update(), STARTUP_POLL_MS);
      poll.unref();
      readyTimer = setTimeout(() => update(true), o.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
      readyTimer.unref();
      update();
    },
    async stop() {
      stopped = true;
      for (const t of [settle, readyTimer]) if (t) clearTimeout(t);
      if (poll) clearInterval(poll);
      watchdog?.stop();
      await Promise.race([
        notifier.notify({ STOPPING: '1', STATUS: 'Shutting down; pods keep running' }),
        new Promise((r) => setTimeout(r, STOP_FLUSH_MS).unref()),
      ]);
    },
  };
}

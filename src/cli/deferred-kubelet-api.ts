// The kubelet API (logs, exec, stats) serves nothing the first sync needs: its modules and its
// certificate load once a pod's first sync step is done (or adoption found none to start), at the
// latest after KUBELET_API_LATEST_MS (the runtime away, pods never get there), so they do not stand
// between `exec` and the first pods. Started once; never after `stop`, which a stopping agent calls
// before anything else so a late worker step or the timer cannot start it.
import type { Logger } from '../log/logger.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import type { RunningKubeletServer } from '../server/kubelet/kubelet-server.js';
import { errorMessage } from '../util/error-message.js';

export const KUBELET_API_LATEST_MS = 5_000;

export interface DeferredKubeletApiOptions {
  /** enableServer: false never starts it. */
  readonly enabled: boolean;
  /** Loads and starts the server (its modules imported here, not before). */
  readonly start: () => Promise<RunningKubeletServer | undefined>;
  readonly logger: Logger;
  readonly latestMs?: number;
}

export interface DeferredKubeletApi {
  /** Tells it of the workers' steps: the first one starts it. */
  readonly observer: PodWorkerObserver;
  /** Starts it now unless started or stopped (adoption found no pod to start). */
  startNow(): void;
  /** From here on it never starts. */
  stop(): void;
  /** Closes the server if it started. */
  close(): Promise<void>;
}

export function deferKubeletApi(o: DeferredKubeletApiOptions): DeferredKubeletApi {
  let server: Promise<RunningKubeletServer | undefined> | undefined;
  const startNow = (): void => {
    clearTimeout(latest);
    if (!o.enabled) {
      server ??= Promise.resolve(undefined);
      return;
    }
    server ??= o.start().catch((err: unknown) => {
      o.logger.error('Cannot start the kubelet API', { err: errorMessage(err) });
      return undefined;
    });
  };
  const latest = setTimeout(startNow, o.latestMs ?? KUBELET_API_LATEST_MS);
  if (!o.enabled) o.logger.info('The kubelet API is off (enableServer: false)');
  return {
    observer: {
      podWorkerStep: () => {
        if (!server) startNow();
      },
    },
    startNow,
    stop: () => {
      clearTimeout(latest);
      server ??= Promise.resolve(undefined);
    },
    close: async () => {
      await (await server)?.close();
    },
  };
}

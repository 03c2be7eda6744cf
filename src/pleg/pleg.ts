// The PLEG bootlet runs: relisting underneath, woken at once by the runtime's events where it has
// any. At start it tries, in order, CRI GetContainerEvents, containerd's own task events (when the
// runtime is containerd: 1.6 answers the CRI stream UNIMPLEMENTED, and 1.7's is shared among its
// subscribers, so containerd 1.x goes straight to its task events), and settles for relisting every
// second (the kubelet's generic PLEG) when neither is served. An event only asks for a read of the
// runtime (a pod, an object, or a relist): what the cache holds is always what the CRI answered, never
// what an event said (kubernetes#123087: the kubelet's evented PLEG wrote an event's status into its
// cache and started a container twice). While an event stream is up the relist
// is only a slow safety net; while it is down (reconnecting with back-off) relisting is fast again.
import type { Logger } from '../log/logger.js';
import { ContainerdEventsClient } from '../cri/containerd-events.js';
import type { RuntimeService } from '../cri/cri-types.js';
import { openContainerdEventStream } from './containerd-event-source.js';
import { openCriEventStream } from './cri-event-source.js';
import type { RuntimeReader } from './runtime-reader.js';
import { criEventsReachEverySubscriber } from './cri-events-fanout.js';
import { RelistPleg } from './relist-pleg.js';
import { StreamSupervisor, type StreamCallbacks, type StreamHandle } from './stream-supervisor.js';
import type { Pleg, PlegMechanism, PodLifecycleEvent } from './types.js';
import { plegHealthProblem } from './pleg-health.js';

/** Without events: the kubelet's genericPlegRelistPeriod. */
export const DEFAULT_RELIST_PERIOD_MS = 1000;
/**
 * With events. The net catches what no task event announces (an object removed or created behind
 * bootlet's back, e.g. with crictl; a change the CRI showed only after the follow-ups gave up).
 * The kubelet's evented PLEG waits 300 s for those. bench/pleg.ts measures relisting 30 pods every
 * second at about 1 % of a core (a relist a second apart runs cold: ~10 ms of CPU), which alone
 * would spend the agent's idle budget; every 10 s costs a tenth of that and bounds such a miss to
 * 10 s, while the events keep the detection of a death at the CRI's own pace.
 */
export const DEFAULT_EVENTED_RELIST_PERIOD_MS = 10_000;
/** How long a quiet stream must stay open before it counts as served. */
const DEFAULT_CONFIRM_MS = 1000;

/** The part of ContainerdEventsClient the PLEG uses; a fake in unit tests. */
export type ContainerdEvents = Pick<ContainerdEventsClient, 'subscribeTaskEvents' | 'close'>;

export interface CreatePlegOptions {
  runtime: RuntimeService;
  /** The runtime reader, which keeps the one cache of runtime state current. */
  reader: RuntimeReader;
  /** The CRI endpoint: containerd serves its own event service on the same socket. */
  endpoint: string;
  /** VersionResponse.runtimeName: containerd's task events are tried only for 'containerd'. */
  runtimeName: string;
  /** VersionResponse.runtimeVersion: containerd 1.x's CRI events are not used (cri-events-fanout.ts). */
  runtimeVersion: string;
  logger: Logger;
  onEvent: (e: PodLifecycleEvent) => void;
  /** After each successful relist (metrics). */
  onRelist?: (durationMs: number, intervalMs: number | undefined) => void;
  /** The runtime answers again after relists failed. */
  onRuntimeBack?: () => void;
  relistPeriodMs?: number;
  eventedRelistPeriodMs?: number;
  confirmMs?: number;
  /** Injected in tests; by default a ContainerdEventsClient on `endpoint`. */
  containerdEvents?: (endpoint: string) => ContainerdEvents;
}

export interface EventedPleg extends Pleg {
  /** What currently tells the PLEG about changes: an event stream that is up, or relisting. */
  mechanism(): PlegMechanism;
  /** One relist now (tests, and a caller that wants an immediate look). */
  relist(): Promise<void>;
  /** Why the PLEG is not healthy (no relist within the kubelet's threshold), or undefined. */
  healthProblem(): string | undefined;
}

export function createPleg(opts: CreatePlegOptions): EventedPleg {
  const fastMs = opts.relistPeriodMs ?? DEFAULT_RELIST_PERIOD_MS;
  const slowMs = opts.eventedRelistPeriodMs ?? DEFAULT_EVENTED_RELIST_PERIOD_MS;
  const log = opts.logger;
  const relister = new RelistPleg({
    reader: opts.reader,
    periodMs: fastMs,
    logger: log,
    onEvent: opts.onEvent,
    onRelist: opts.onRelist,
    onRuntimeBack: opts.onRuntimeBack,
  });
  let current: PlegMechanism = 'relist';
  let chosen = false;
  let supervisor: StreamSupervisor | undefined;
  let containerd: ContainerdEvents | undefined;
  let stopped = true;

  const choose = (mechanism: PlegMechanism, reason: string): void => {
    if (chosen) return;
    chosen = true;
    const periodMs = mechanism === 'relist' ? fastMs : slowMs;
    log.info('PLEG mechanism chosen', { mechanism, relistPeriod: `${periodMs}ms`, reason });
  };

  const supervise = (
    mechanism: Exclude<PlegMechanism, 'relist'>,
    open: (cb: StreamCallbacks) => StreamHandle,
    why: string,
    next: (reason: string) => void,
  ): void => {
    supervisor = new StreamSupervisor({
      open,
      confirmMs: opts.confirmMs ?? DEFAULT_CONFIRM_MS,
      onUp: () => {
        if (chosen) log.info('PLEG event stream is back', { mechanism });
        choose(mechanism, why);
        current = mechanism;
        relister.setPeriod(slowMs);
        // Whatever happened while the stream was being (re)opened was not announced.
        relister.requestRelist();
      },
      onDown: (reason, retryInMs) => {
        log.warn('PLEG event stream ended; relisting fast until it is back', {
          mechanism,
          reason,
          retryIn: `${retryInMs}ms`,
          relistPeriod: `${fastMs}ms`,
        });
        current = 'relist';
        relister.setPeriod(fastMs);
      },
      onUnsupported: (reason) => {
        supervisor = undefined;
        if (!stopped) next(reason);
      },
    });
    supervisor.start();
  };

  const relistOnly = (reason: string): void => {
    current = 'relist';
    relister.setPeriod(fastMs);
    choose('relist', reason);
  };

  /** containerd's task events, `whyNotCri` being why CRI events are not used. */
  const useContainerdEvents = (whyNotCri: string, fallback: (reason: string) => string): void => {
    containerd = (opts.containerdEvents ?? ((e) => new ContainerdEventsClient(e)))(opts.endpoint);
    supervise(
      'containerd-events',
      openContainerdEventStream(containerd, relister),
      `${whyNotCri}; containerd task events (/tasks/start, /tasks/exit, /tasks/delete, /tasks/oom) trigger relists`,
      (reason) => relistOnly(fallback(reason)),
    );
  };

  const tryContainerd = (criReason: string): void => {
    if (opts.runtimeName !== 'containerd') {
      relistOnly(
        `CRI GetContainerEvents is not served (${criReason}) and the runtime is ${opts.runtimeName || 'unnamed'}, not containerd`,
      );
      return;
    }
    useContainerdEvents(
      'CRI GetContainerEvents is not served (UNIMPLEMENTED)',
      (reason) => `neither CRI GetContainerEvents nor containerd's event service is served (${reason})`,
    );
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      relister.start();
      if (!criEventsReachEverySubscriber(opts.runtimeName, opts.runtimeVersion)) {
        useContainerdEvents(
          `containerd ${opts.runtimeVersion} does not broadcast CRI GetContainerEvents (1.6 does not serve it; 1.7 hands each event to one subscriber only, containerd#7318, fixed in 2.0)`,
          (reason) => `containerd's event service is not served (${reason}) and its CRI events are shared`,
        );
        return;
      }
      supervise(
        'cri-events',
        openCriEventStream(opts.runtime, relister),
        'the runtime serves CRI GetContainerEvents',
        tryContainerd,
      );
    },
    stop() {
      stopped = true;
      supervisor?.stop();
      supervisor = undefined;
      containerd?.close();
      containerd = undefined;
      relister.stop();
    },
    sinceLastRelistMs: () => relister.sinceLastRelistMs(),
    mechanism: () => current,
    relist: () => relister.relist(),
    healthProblem: () => plegHealthProblem(relister.sinceLastRelistMs()),
  };
}

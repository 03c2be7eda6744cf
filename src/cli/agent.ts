// Builds the agent from its parts and starts it: manifest directory → desired pods → pod workers
// → CRI, with the PLEG and the prober waking workers, status computed beside them, the local
// endpoints, and the API side when a kubeconfig is given.
import { readFileSync } from 'node:fs';
import { startPodCgroups } from '../cm/start.js';
import { startFileSource } from '../config/file-source.js';
import { StaticPodSet } from '../config/static-pod-set.js';
import { validateClientConfig } from '../apiserver/index.js';
import type { Logger } from '../log/logger.js';
import { unexpectedErrorCount } from '../log/unexpected-errors.js';
import { createPleg } from '../pleg/pleg.js';
import type { Pleg } from '../pleg/types.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import { PodWorkers } from '../podworkers/pod-workers.js';
import { ProberManager } from '../prober/prober-manager.js';
import { ContainerLogManager } from '../runtime/container-log-manager.js';
import { connectRuntime } from '../runtime/cri-client.js';
import { CriPodRuntime } from '../runtime/pod-operations.js';
import { RuntimeHealth } from '../runtime/runtime-health.js';
import { getRuntimePod, listRuntimePods, RuntimeStatusCache } from '../runtime/runtime-pods.js';
import { startEndpoints } from '../server/endpoints.js';
import { StatusManager } from '../status/status-manager.js';
import { onProbeResult, statusObserver } from '../status/worker-events.js';
import { BOOTLET_VERSION, kubeletVersion } from '../version.js';
import { startApiLink, type ApiLink } from './api-link.js';
import { formatDuration } from './duration.js';
import { startMemoryReducer } from './memory-reducer.js';
import type { BootletOptions } from './options.js';
import { linkProber } from './prober-link.js';

/** Often enough that memory settles soon after a burst, rarely enough to cost nothing measurable. */
const MEMORY_REDUCER_PERIOD_MS = 15_000;
const STATUS_SETTLE_MS = 100;
const STATUS_FULL_PASS_MS = 5 * 60_000;
/** Two safety-net relists (10 s apart) may fail before resyncs stop trusting the PLEG. */
const RUNTIME_WATCHED_WITHIN_MS = 25_000;

/** resolvConf "" means no host DNS at all; an unreadable file gives pods an empty one. */
function readResolvConf(file: string, logger: Logger): string | undefined {
  if (file === '') return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    logger.warn('Cannot read resolvConf; pods with host DNS get no nameservers', { file, err: (err as Error).message });
    return '';
  }
}

export interface RunningAgent {
  /** Stops watching and reporting; every pod keeps running. */
  shutdown(): Promise<void>;
}

/** Throws RuntimeConnectError or KubeconfigError for the caller to report in one line. A taken port does not stop it. */
export async function startAgent(opts: BootletOptions, logger: Logger): Promise<RunningAgent> {
  logger.info('Starting bootlet', {
    version: BOOTLET_VERSION,
    kubeletVersion: kubeletVersion(),
    node: opts.nodeName,
    nodeIP: opts.nodeIP,
    podManifestPath: opts.podManifestPath,
    containerRuntimeEndpoint: opts.containerRuntimeEndpoint,
    fileCheckFrequency: formatDuration(opts.fileCheckFrequencyMs),
    syncFrequency: formatDuration(opts.syncFrequencyMs),
    kubeconfig: opts.kubeconfig,
    bootstrapKubeconfig: opts.bootstrapKubeconfig,
    rotateCertificates: opts.rotateCertificates,
  });
  // A kubeconfig that cannot be used is a start-up error (unless a bootstrap kubeconfig can replace
  // it); a server that does not answer is not.
  if (opts.kubeconfig) validateClientConfig(opts.kubeconfig, opts.bootstrapKubeconfig);
  else if (opts.bootstrapKubeconfig) logger.warn('--bootstrap-kubeconfig is ignored without --kubeconfig: running standalone', { bootstrapKubeconfig: opts.bootstrapKubeconfig });

  const { runtime, images, version } = await connectRuntime(opts.containerRuntimeEndpoint, {
    requestTimeoutMs: opts.runtimeRequestTimeoutMs,
    imageServiceEndpoint: opts.imageServiceEndpoint,
  });
  logger.info('Container runtime initialized', { containerRuntime: version.runtimeName, version: version.runtimeVersion, apiVersion: version.runtimeApiVersion });
  const health = new RuntimeHealth(runtime, logger);
  health.start();
  const cgroups = await startPodCgroups(
    { cgroupDriver: opts.cgroupDriver === 'systemd' ? 'systemd' : 'cgroupfs', cgroupsPerQOS: opts.cgroupsPerQOS, cgroupRoot: opts.cgroupRoot, podPidsLimit: opts.podPidsLimit },
    runtime,
    logger.with({ component: 'cm' }),
  );

  const statusCache = new RuntimeStatusCache();
  const podRuntime = new CriPodRuntime({
    runtime,
    images,
    rootDir: opts.rootDir,
    podLogsDir: opts.podLogsDir,
    nodeName: opts.nodeName,
    nodeIP: opts.nodeIP,
    resolvConf: readResolvConf(opts.resolvConf, logger),
    clusterDNS: opts.clusterDNS,
    clusterDomain: opts.clusterDomain,
    logger,
    statusCache,
    cgroups,
  });
  const observers: PodWorkerObserver[] = [];
  let pleg: Pleg | undefined;
  const workers = new PodWorkers({
    runtime: podRuntime,
    logger,
    syncFrequencyMs: opts.syncFrequencyMs,
    observers,
    runtimeWatched: () => pleg !== undefined && pleg.sinceLastRelistMs() < RUNTIME_WATCHED_WITHIN_MS,
  });
  const prober = new ProberManager({ runtime, logger: logger.with({ component: 'prober' }) });
  observers.push(linkProber(prober, workers, opts.nodeIP));
  const status = new StatusManager({
    getRuntimePod: (uid) => getRuntimePod(runtime, uid, statusCache),
    pods: () => workers.snapshot(),
    probes: { ready: (u, n) => prober.readiness(u, n), started: (u, n) => prober.started(u, n) },
    nodeIP: opts.nodeIP,
    runtimeName: version.runtimeName,
    logger: logger.with({ component: 'status' }),
    // Out of the way of a starting pod's CRI calls; still well within the API side's 2 s.
    settleMs: STATUS_SETTLE_MS,
  });
  observers.push(statusObserver(status));
  prober.onResult(onProbeResult(status));
  pleg = createPleg({
    runtime,
    endpoint: opts.containerRuntimeEndpoint,
    runtimeName: version.runtimeName,
    logger,
    onEvent: (e) => {
      workers.wake(e.podUid);
      status.update(e.podUid);
    },
    // Pods whose steps failed while the runtime was away retry now, not at the end of their back-off
    // (up to 15 s): a pod written during a containerd restart started 7 s after it was back.
    onRuntimeBack: () => workers.wakeAll(),
  });
  const logRotation = new ContainerLogManager({
    runtime,
    logger,
    maxSizeBytes: opts.containerLogMaxSizeBytes,
    maxFiles: opts.containerLogMaxFiles,
    intervalMs: opts.containerLogMonitorIntervalMs,
  });
  const endpoints = await startEndpoints({
    healthzBindAddress: opts.healthzBindAddress,
    healthzPort: opts.healthzPort,
    address: opts.address,
    readOnlyPort: opts.readOnlyPort,
    rootDir: opts.rootDir,
    syncFrequencyMs: opts.syncFrequencyMs,
    source: { statuses: () => status.all(), sinceLastRelistMs: () => pleg.sinceLastRelistMs(), unexpectedErrors: unexpectedErrorCount },
    logger,
  });

  const staticPods = new StaticPodSet();
  let api: ApiLink | undefined;
  if (opts.kubeconfig) {
    api = startApiLink({ ...opts, kubeconfig: opts.kubeconfig }, {
      staticPods,
      status,
      runtimeName: version.runtimeName,
      runtimeVersion: version.runtimeVersion,
      runtimeReady: () => health.ready(),
      logger,
    });
    observers.push(api.observer);
    prober.onResult((e) => {
      if (!e.changed || e.result !== 'failure') return;
      const pod = workers.podRef(e.podUid);
      if (!pod) return;
      const probe = e.probeType[0]!.toUpperCase() + e.probeType.slice(1);
      api?.recordPodEvent({ ...pod, uid: e.podUid, type: 'Warning', reason: 'Unhealthy', message: `${probe} probe failed: ${e.output}`, container: e.containerName });
    });
    logger.info('API server client configured; the node runs on its own until the server answers', { kubeconfig: opts.kubeconfig });
  } else {
    logger.info('No --kubeconfig: running standalone, no API server will be contacted');
  }

  // Events and every worker's periodic resync keep statuses current; the full pass is only a
  // safety net, and it reads the runtime for every pod, so it is rare.
  status.start(STATUS_FULL_PASS_MS);
  logRotation.start();
  const memory = startMemoryReducer({ intervalMs: MEMORY_REDUCER_PERIOD_MS });

  const source = startFileSource({
    path: opts.podManifestPath,
    nodeName: opts.nodeName,
    fileCheckFrequencyMs: opts.fileCheckFrequencyMs,
    logger,
    events: {
      update: (u) => {
        if (u.op !== 'REMOVE') cgroups.trackPod(u.pod.pod);
        workers.apply(u);
        staticPods.apply(u);
      },
      error: () => {}, // the file source logs each refused manifest once, with file and reason
      warning: () => {},
      ready: () => {
        // Only now is the desired set complete: what runs without a manifest can be told apart.
        // The runtime may be restarting: the read is retried (nothing starts before it succeeds).
        let attempt = 0;
        const adopt = (): void => {
          listRuntimePods(runtime)
            .then((found) => {
              logger.info('Manifests read, adopting running pods', { runtimePods: found.size });
              workers.adoptRuntimePods(found);
              staticPods.markReady();
              pleg.start();
            })
            .catch((err: unknown) => {
              const delay = Math.min(10_000, 500 * 2 ** Math.min(attempt++, 5));
              logger.error('Could not read pods back from the runtime, will retry', { err: err instanceof Error ? err.message : String(err), retryIn: formatDuration(delay) });
              setTimeout(adopt, delay).unref();
            });
        };
        adopt();
      },
    },
  });

  return {
    async shutdown() {
      pleg.stop();
      prober.stop();
      status.stop();
      memory.stop();
      health.stop();
      logRotation.stop();
      workers.shutdown();
      cgroups.stop();
      await Promise.allSettled([source.stop(), endpoints.close(), api?.stop()]);
      runtime.close();
    },
  };
}

// Builds the agent from its parts and starts it: manifest directory → desired pods → pod workers
// → CRI, with the PLEG and the prober waking workers, status computed beside them, the local
// endpoints, and the API side when a kubeconfig is given.
import { startPodCgroups } from '../cm/start.js';
import { isCgroup2UnifiedMode, UNIFIED_MOUNTPOINT } from '../cm/cgroup-subsystems.js';
import { PodConfig } from '../config/pod-config/pod-config.js';
import { configuredSources, startPodSources } from '../config/pod-config/start-sources.js';
import { collectNodeInfo } from '../apiserver/node-info.js';
import { droppedLogLines, type Logger } from '../log/logger.js';
import { unexpectedErrorCount } from '../process/unexpected-errors.js';
import { PodCache } from '../pleg/pod-cache.js';
import { AgentMetrics } from '../metrics/agent-metrics.js';
import { createPleg } from '../pleg/pleg.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import { PodWorkers } from '../podworkers/pod-workers.js';
import { ProberManager } from '../prober/prober-manager.js';
import { ContainerLogManager } from '../node/container-log-manager.js';
import { connectRuntime, preparePodStartCodecs } from '../cri/cri-client.js';
import { ContainerState } from '../cri/cri-types.js';
import { CriPodRuntime } from '../kuberuntime/pod-operations.js';
import { UnstartedTasks } from '../kuberuntime/unstarted-task.js';
import { ContainerdTasksClient } from '../cri/containerd-tasks.js';
import { RuntimeHealth } from '../kuberuntime/runtime-health.js';
import { RuntimePodCIDR } from '../kuberuntime/pod-cidr.js';
import { warnInvalidIdentityOnce } from '../kuberuntime/runtime-pods.js';
import { readHostResolvConf } from '../kuberuntime/host-resolv-conf.js';
import { startEndpoints } from '../server/endpoints.js';
import { pingCheck, syncLoopCheck } from '../server/healthz.js';
import type { ServerSource } from '../server/source.js';
import { StatusManager } from '../status/status-manager.js';
import { onProbeResult, statusObserver } from '../status/worker-events.js';
import { kubeletVersion } from '../version.js';
import type { BootletOptions } from './options.js';
import {
  criCallMetrics,
  linkMetrics,
  probeMetrics,
  registerRestClientMetrics,
  relistMetrics,
} from '../metrics/metrics-link.js';
import { linkProber } from '../prober/pod-worker-link.js';
import { startSystemdLink } from '../systemd/systemd-link.js';
import { linkAdoption } from './adoption-link.js';
import { linkAdmission } from './admission-link.js';
import { apiClientMode } from './api-client-mode.js';
import { startApiLink } from './api-link.js';
import { deferKubeletApi } from './deferred-kubelet-api.js';
import { linkPodObjects } from './pod-objects-link.js';
import { logStarting } from './startup-notes.js';
import type { NodeShutdownManager } from '../nodeshutdown/node-shutdown-manager.js';
import { startNodeShutdown } from '../nodeshutdown/start.js';

const STATUS_SETTLE_MS = 100;
const STATUS_FULL_PASS_MS = 5 * 60_000;

export interface RunningAgent {
  /** Stops watching and reporting; every pod keeps running. */
  shutdown(): Promise<void>;
}

/** Throws RuntimeConnectError or KubeconfigError for the caller to report in one line. A taken port does not stop it. */
export async function startAgent(opts: BootletOptions, logger: Logger): Promise<RunningAgent> {
  logStarting(opts, logger);
  // Standalone until a kubeconfig exists; the API side's modules load only for a node that has one.
  const mode = await apiClientMode(opts, logger);
  opts = mode.opts;
  const apiModule = mode.apiModule;

  // One registry for every server that serves /metrics; parts report to it through callbacks.
  const metrics = new AgentMetrics({ nodeName: opts.nodeName });
  registerRestClientMetrics(metrics);
  const { runtime, images, version } = await connectRuntime(opts.containerRuntimeEndpoint, {
    requestTimeoutMs: opts.runtimeRequestTimeoutMs,
    imageServiceEndpoint: opts.imageServiceEndpoint,
    onCall: criCallMetrics(metrics),
  });
  logger.info('Container runtime initialized', {
    containerRuntime: version.runtimeName,
    version: version.runtimeVersion,
    apiVersion: version.runtimeApiVersion,
  });
  const health = new RuntimeHealth(runtime, logger);
  health.start();
  // The Node's pod CIDR, once the API side reads one, goes to the runtime; its network state is read again at once.
  const podCIDR = new RuntimePodCIDR(runtime, logger, () => void health.pollNow());
  // As the kubelet at start: podCIDR from the configuration (standalone mode), if any.
  void podCIDR.update(opts.podCIDR);
  // The one desired pod set: every source feeds it, the workers subscribe, cgroups and the API side read it.
  const podConfig = new PodConfig({ sources: configuredSources(opts), logger });
  const cgroups = await startPodCgroups(
    {
      cgroupDriver: opts.cgroupDriver === 'systemd' ? 'systemd' : 'cgroupfs',
      cgroupsPerQOS: opts.cgroupsPerQOS,
      cgroupRoot: opts.cgroupRoot,
      podPidsLimit: opts.podPidsLimit,
    },
    runtime,
    logger.with({ component: 'cm' }),
    { desiredPods: () => podConfig.all().flatMap((p) => (p.refusal ? [] : [p.pod])) },
  );

  // The one cache of runtime state: the PLEG keeps it current; workers and status read it.
  const cache = new PodCache(runtime, { invalidIdentity: warnInvalidIdentityOnce(logger) });
  // The API pods' ConfigMaps, Secrets, Services and tokens (src/node/pod-objects.ts), for volumes
  // and env. Made here so the pod runtime can be handed it; the API side registers the desired API
  // pods in it and attaches its connection. Standalone (no kubeconfig) there is none: static pods
  // refer to no API object.
  const podObjects = apiModule ? new apiModule.DeferredPodObjects() : undefined;
  const podRuntime = new CriPodRuntime({
    runtime,
    images,
    rootDir: opts.rootDir,
    podLogsDir: opts.podLogsDir,
    nodeName: opts.nodeName,
    nodeIP: opts.nodeIP,
    resolvConf: readHostResolvConf(opts.resolvConf, logger),
    clusterDNS: opts.clusterDNS,
    clusterDomain: opts.clusterDomain,
    logger,
    cgroups,
    podObjects,
    unstartedTasks: new UnstartedTasks({
      runtime,
      tasks: () => new ContainerdTasksClient(opts.containerRuntimeEndpoint, opts.runtimeRequestTimeoutMs),
      logger,
    }),
  });
  const observers: PodWorkerObserver[] = [];
  const prober = new ProberManager({
    runtime,
    logger: logger.with({ component: 'prober' }),
    onProbeRun: probeMetrics(metrics),
  });
  const workers = new PodWorkers({
    runtime: podRuntime,
    logger,
    syncFrequencyMs: opts.syncFrequencyMs,
    observers,
    cache,
    probes: prober,
    desired: podConfig,
    // The status is made below; a worker asks only once pods run.
    finalStatus: { record: (uid): Promise<void> => status.recordFinal(uid) },
    network: health,
    // An API pod found running that the API server no longer binds here is stopped (after its first LIST: hold-back).
    readSources: new Set(configuredSources(opts)),
  });
  observers.push(linkProber(prober, workers, opts.nodeIP));
  linkPodObjects(podObjects, { workers, podConfig, logger });
  const status = new StatusManager({
    runtimePod: (uid) => cache.get(uid).pod,
    pods: () => workers.snapshot(),
    pod: (uid) => workers.snapshotOf(uid),
    probes: { ready: (u, n) => prober.readiness(u, n), started: (u, n) => prober.started(u, n) },
    nodeIP: opts.nodeIP,
    runtimeName: version.runtimeName,
    logger: logger.with({ component: 'status' }),
    // Out of the way of a starting pod's CRI calls; still well within the API side's 2 s.
    settleMs: STATUS_SETTLE_MS,
  });
  // Admission sits between the desired set and the workers (the kubelet's HandlePodAdditions).
  let nodeShutdown: NodeShutdownManager | undefined;
  const nodeInfo = collectNodeInfo({
    nodeName: opts.nodeName,
    nodeIP: opts.nodeIP,
    runtimeVersion: `${version.runtimeName}://${version.runtimeVersion}`,
    kubeletVersion: kubeletVersion(),
    labels: opts.nodeLabels,
    taints: opts.registerWithTaints,
    runtimeReady: () => health.ready(),
    networkNotReady: () => health.networkNotReady(),
    shuttingDown: () => nodeShutdown?.isShuttingDown() ?? false,
    rootDir: opts.rootDir,
    maxPods: opts.maxPods,
    kubeletPort: opts.port,
  });
  const admission = linkAdmission({
    nodeInfo,
    allowedUnsafeSysctls: opts.allowedUnsafeSysctls,
    apply: (u) => workers.apply(u),
    stopped: (uid) => workers.whenStopped(uid),
    status,
    observers,
    logger,
  });
  podConfig.subscribe((u) => admission.update(u));
  observers.push(statusObserver(status));
  observers.push(linkMetrics(metrics, status));
  prober.onResult(onProbeResult(status));
  const pleg = createPleg({
    runtime,
    cache,
    endpoint: opts.containerRuntimeEndpoint,
    runtimeName: version.runtimeName,
    logger,
    onEvent: (e) => {
      workers.wake(e.podUid);
      status.update(e.podUid);
    },
    onRelist: relistMetrics(metrics),
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
    // From the pod cache, which has read every container's status: no CRI call per round.
    runningContainers: () =>
      [...cache.pods().values()].flatMap((p) =>
        p.containers
          .filter((c) => c.state === ContainerState.CONTAINER_RUNNING)
          .map((c) => ({ id: c.id, logPath: c.logPath })),
      ),
  });
  const syncLoop = syncLoopCheck(() => pleg.sinceLastRelistMs(), opts.syncFrequencyMs);
  const healthChecks = [pingCheck, syncLoop];
  const systemd = startSystemdLink({
    env: process.env,
    logger,
    workers: () => workers.snapshot(),
    status: (uid) => status.get(uid),
    onStatusChange: (listener) => void status.onChange(() => listener()),
    health: () => pleg.healthProblem() ?? syncLoop.check(),
  });
  const serverSource: ServerSource = {
    statuses: () => status.all(),
    sinceLastRelistMs: () => pleg.sinceLastRelistMs(),
    unexpectedErrors: unexpectedErrorCount,
    droppedLogLines,
  };
  metrics.bind(serverSource);
  // Not waited for here: the local endpoints serve nothing the first sync needs, and the manifests
  // are read (and the runtime read back) while they start.
  const endpointsStarting = startEndpoints({
    healthzBindAddress: opts.healthzBindAddress,
    healthzPort: opts.healthzPort,
    address: opts.address,
    readOnlyPort: opts.readOnlyPort,
    rootDir: opts.rootDir,
    syncFrequencyMs: opts.syncFrequencyMs,
    source: serverSource,
    checks: healthChecks,
    metrics,
    logger,
  });

  const api = startApiLink(apiModule, {
    opts,
    nodeInfo,
    podConfig,
    status,
    workers,
    prober,
    podCIDR,
    podObjects,
    observers,
    logger,
  });
  const kubeletApi = deferKubeletApi({
    enabled: opts.enableServer,
    start: () =>
      import('../server/kubelet/start-kubelet-api.js').then((m) =>
        m.startKubeletApi(opts, {
          source: serverSource,
          metrics: () => metrics.render(),
          runtime,
          checks: healthChecks,
          api,
          logger,
          cgroups: {
            podCgroup: (pod) => cgroups.podCgroupParent(pod) || undefined,
            unifiedRoot: isCgroup2UnifiedMode() ? UNIFIED_MOUNTPOINT : undefined,
          },
        }),
      ),
    logger,
  });
  observers.push(kubeletApi.observer);

  nodeShutdown = startNodeShutdown(opts, {
    workers,
    desired: podConfig,
    status,
    api,
    // The Node's Ready condition at once, not at the next status round (the kubelet's syncNodeStatus).
    onShuttingDown: () => void api?.flush([], 0),
    logger,
  });

  // Events and every worker's periodic resync keep statuses current; the full pass is only a
  // safety net, and it reads the runtime for every pod, so it is rare.
  status.start(STATUS_FULL_PASS_MS);
  logRotation.start();

  const sources = startPodSources(opts, podConfig, logger, (claims) => workers.refusedClaims(claims));
  const stopAdoption = linkAdoption({
    podConfig,
    cache,
    admission,
    sources,
    workers,
    adopted: (admitted) => {
      pleg.start();
      // In the turns the first pods leave free (or while the agent waits for manifests).
      void preparePodStartCodecs();
      if (workers.snapshot().length === 0) kubeletApi.startNow();
      // READY=1 never comes before the endpoints serve (a failure to start them ends the agent).
      void endpointsStarting.then(
        () => systemd?.sourcesReady(admitted),
        () => undefined,
      );
    },
    logger,
  });

  const endpoints = await endpointsStarting;

  return {
    async shutdown() {
      stopAdoption();
      // A worker step or the timer after this point must not start the server on a stopping agent.
      kubeletApi.stop();
      await nodeShutdown?.stop();
      await systemd?.stop();
      pleg.stop();
      prober.stop();
      status.stop();
      health.stop();
      logRotation.stop();
      workers.shutdown();
      cgroups.stop();
      await Promise.allSettled([sources.stop(), endpoints.close(), kubeletApi.close(), api?.stop()]);
      runtime.close();
    },
  };
}

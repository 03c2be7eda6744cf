// Builds the agent from its parts and starts it: manifest directory → desired pods → pod workers
// → CRI, with the PLEG and the prober waking workers, status computed beside them, the local
// endpoints, and the API side when a kubeconfig is given.
import type { ApiSide } from '../apiserver/api-side.js';
import { startPodCgroups } from '../cm/start.js';
import { PodConfig } from '../config/pod-config/pod-config.js';
import { configuredSources, startPodSources } from '../config/pod-config/start-sources.js';
import type { Logger } from '../log/logger.js';
import { PodCache } from '../pleg/pod-cache.js';
import { RuntimeReader } from '../pleg/runtime-reader.js';
import { AgentMetrics } from '../metrics/agent-metrics.js';
import { createPleg } from '../pleg/pleg.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import { PodWorkers } from '../podworkers/pod-workers.js';
import { ProberManager } from '../prober/prober-manager.js';
import { CriPodRuntime } from '../kuberuntime/pod-operations.js';
import { UnstartedTasks } from '../kuberuntime/unstarted-task.js';
import { ContainerdTasksClient } from '../cri/containerd-tasks.js';
import { preparePodStartCodecs } from '../cri/cri-client.js';
import { PodIsolation } from '../kuberuntime/pod-isolation.js';
import { nodeUserNamespaces } from '../node/userns/node-user-namespaces.js';
import { warnInvalidIdentityOnce } from '../kuberuntime/runtime-pods.js';
import { readHostResolvConf } from '../kuberuntime/host-resolv-conf.js';
import { ReportedStatuses } from '../status/reported-statuses.js';
import { StatusManager } from '../status/status-manager.js';
import { onProbeResult, statusObserver } from '../status/worker-events.js';
import type { BootletOptions } from './options.js';
import { linkMetrics, probeMetrics, registerRestClientMetrics, relistMetrics } from '../metrics/metrics-link.js';
import { linkProber } from '../prober/pod-worker-link.js';
import { linkAdoption } from './adoption-link.js';
import { linkImageFs } from './image-fs-link.js';
import { linkAdmission } from './admission-link.js';
import { allocatedLookup, linkAllocations } from './allocation-link.js';
import { apiClientMode } from './api-client-mode.js';
import { startLocalEndpoints } from './endpoints-link.js';
import { linkKubeletApi } from './kubelet-api-link.js';
import { linkLogRotation } from './log-rotation-link.js';
import { agentNodeInfo } from './node-info-link.js';
import { connectRuntimeLink } from './runtime-link.js';
import { startApiLink } from './api-link.js';
import { linkPodObjects } from './pod-objects-link.js';
import { logStarting } from './startup-notes.js';
import { readAppArmorHost } from '../node/apparmor-host.js';
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
  const { runtime, images, version, health, podCIDR } = await connectRuntimeLink(opts, metrics, logger);
  // The one desired pod set: every source feeds it, the workers subscribe, cgroups and the API side read it.
  const podConfig = new PodConfig({ sources: configuredSources(opts), logger });
  // What resized pods run with (in-place resize), kept across restarts in the kubelet's checkpoint.
  const allocations = await linkAllocations(opts.rootDir, logger);
  const cgroups = await startPodCgroups(
    {
      cgroupDriver: opts.cgroupDriver === 'systemd' ? 'systemd' : 'cgroupfs',
      cgroupsPerQOS: opts.cgroupsPerQOS,
      cgroupRoot: opts.cgroupRoot,
      podPidsLimit: opts.podPidsLimit,
    },
    runtime,
    logger.with({ component: 'cm' }),
    {
      desiredPods: () => podConfig.all().flatMap((p) => (p.refusal ? [] : [allocations.allocatedPod(p.pod)])),
      onRuntimeConfigUnimplemented: () => metrics.runtimeLosingSupport(),
    },
  );

  // The one cache of runtime state, written by the one reader of the runtime: the PLEG keeps it
  // current; workers reach it through the reader, status reads it.
  const cache = new PodCache();
  const reader = new RuntimeReader(runtime, cache, { invalidIdentity: warnInvalidIdentityOnce(logger) });
  // The API pods' ConfigMaps, Secrets, Services and tokens (src/node/pod-objects.ts), for volumes
  // and env. Made here so the pod runtime can be handed it; the API side registers the desired API
  // pods in it and attaches its connection. Standalone (no kubeconfig) there is none: static pods
  // refer to no API object.
  const podObjects = apiModule ? new apiModule.DeferredPodObjects() : undefined;
  // The RuntimeClasses pods name, read from the API server once it is there (none standalone).
  const runtimeClasses = apiModule ? new apiModule.DeferredRuntimeClasses() : undefined;
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
    isolation: new PodIsolation({
      runtimeClasses,
      handlers: health,
      userNamespaces: nodeUserNamespaces({
        rootDir: opts.rootDir,
        maxPods: opts.maxPods,
        idsPerPod: opts.userNamespacesIdsPerPod,
        logger,
      }),
      logger,
    }),
    unstartedTasks: new UnstartedTasks({
      runtime,
      tasks: () => new ContainerdTasksClient(opts.containerRuntimeEndpoint, opts.runtimeRequestTimeoutMs),
      logger,
    }),
  });
  const observers: PodWorkerObserver[] = [];
  // What the API server showed before this start, told by the API side: the status and the prober read it.
  const reported = new ReportedStatuses();
  const prober = new ProberManager({
    runtime,
    logger: logger.with({ component: 'prober' }),
    onProbeRun: probeMetrics(metrics),
    reported,
  });
  const workers = new PodWorkers({
    runtime: podRuntime,
    logger,
    syncFrequencyMs: opts.syncFrequencyMs,
    observers,
    cache: reader,
    probes: prober,
    desired: allocatedLookup(podConfig, allocations),
    // The status is made below; a worker asks only once pods run.
    finalStatus: { record: (worker): Promise<void> => status.recordFinal(worker) },
    network: health,
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
    pendingResize: (uid) => allocations.pending(uid),
    reported,
  });
  // Admission sits between the desired set and the workers (the kubelet's HandlePodAdditions).
  let nodeShutdown: NodeShutdownManager | undefined;
  const imageFs = linkImageFs(images, logger);
  const nodeInfo = agentNodeInfo(
    opts,
    version,
    health,
    () => nodeShutdown?.isShuttingDown() ?? false,
    () => imageFs.dir(),
  );
  // Started below; admission reads the Node it watches.
  let api: ApiSide | undefined;
  const admission = linkAdmission({
    nodeInfo,
    registeredNode: () => api?.node(),
    allowedUnsafeSysctls: opts.allowedUnsafeSysctls,
    appArmor: await readAppArmorHost(),
    apply: (u) => workers.apply(u),
    stop: (uid, request) => void workers.stop(uid, request),
    stopped: (uid) => workers.whenStopped(uid),
    status,
    allocations,
    observers,
    logger,
  });
  podConfig.subscribe((u) => admission.update(u));
  observers.push(statusObserver(status));
  observers.push(linkMetrics(metrics, status));
  prober.onResult(onProbeResult(status));
  const pleg = createPleg({
    runtime,
    reader,
    endpoint: opts.containerRuntimeEndpoint,
    runtimeName: version.runtimeName,
    runtimeVersion: version.runtimeVersion,
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
  const logRotation = linkLogRotation(opts, runtime, cache, logger);
  const local = startLocalEndpoints(opts, { status, workers, pleg, metrics, logger });
  const systemd = local.systemd;

  api = startApiLink(apiModule, {
    opts,
    nodeInfo,
    podConfig,
    status,
    workers,
    prober,
    podCIDR,
    podObjects,
    runtimeClasses,
    observers,
    logger,
  });
  const kubeletApi = linkKubeletApi(opts, {
    source: local.source,
    metrics,
    runtime,
    images,
    checks: local.checks,
    api,
    cgroups,
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

  const sources = startPodSources(opts, podConfig, logger);
  const stopAdoption = linkAdoption({
    podConfig,
    reader,
    admission,
    sources,
    workers,
    adopted: (admitted) => {
      pleg.start();
      // In the turns the first pods leave free (or while the agent waits for manifests).
      void preparePodStartCodecs();
      if (workers.snapshot().length === 0) kubeletApi.startNow();
      // READY=1 never comes before the endpoints serve (a failure to start them ends the agent).
      void local.starting.then(
        () => systemd?.sourcesReady(admitted),
        () => undefined,
      );
    },
  });

  const endpoints = await local.starting;

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

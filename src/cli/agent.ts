// Builds the agent from its parts and starts it: manifest directory → desired pods → pod workers
// → CRI, with the PLEG and the prober waking workers, status computed beside them, the local
// endpoints, and the API side when a kubeconfig is given.
import { existsSync, readFileSync } from 'node:fs';
import { startPodCgroups } from '../cm/start.js';
import { PodConfig } from '../config/pod-config/pod-config.js';
import { configuredSources, startApiPodSource, startPodSources } from '../config/pod-config/start-sources.js';
import type { ApiSide } from '../apiserver/api-side.js';
import { collectNodeInfo } from '../apiserver/node-info.js';
import { droppedLogLines, type Logger } from '../log/logger.js';
import { unexpectedErrorCount } from '../process/unexpected-errors.js';
import { PodCache } from '../pleg/pod-cache.js';
import { AgentMetrics } from '../metrics/agent-metrics.js';
import { createPleg } from '../pleg/pleg.js';
import { startAdoption } from '../podworkers/start-adoption.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import { PodWorkers } from '../podworkers/pod-workers.js';
import { ProberManager } from '../prober/prober-manager.js';
import { ContainerLogManager } from '../node/container-log-manager.js';
import { volumeManagerFor } from '../node/volumes.js';
import { connectRuntime, preparePodStartCodecs } from '../cri/cri-client.js';
import { ContainerState } from '../cri/cri-types.js';
import { CriPodRuntime } from '../kuberuntime/pod-operations.js';
import { RuntimeHealth } from '../kuberuntime/runtime-health.js';
import { RuntimePodCIDR } from '../kuberuntime/pod-cidr.js';
import { warnInvalidIdentityOnce } from '../kuberuntime/runtime-pods.js';
import { configSourceOf } from '../kuberuntime/static-source.js';
import { startEndpoints } from '../server/endpoints.js';
import { pingCheck, syncLoopCheck } from '../server/healthz.js';
import type { RunningKubeletServer } from '../server/kubelet/kubelet-server.js';
import type { ServerSource } from '../server/source.js';
import { StatusManager } from '../status/status-manager.js';
import { onProbeResult, statusObserver } from '../status/worker-events.js';
import { BOOTLET_VERSION, kubeletVersion } from '../version.js';
import { formatDuration } from '../util/duration.js';
import { errorMessage } from '../util/error-message.js';
import type { BootletOptions } from './options.js';
import { criCallMetrics, linkMetrics, probeMetrics, registerRestClientMetrics, relistMetrics } from '../metrics/metrics-link.js';
import { linkProber } from '../prober/pod-worker-link.js';
import { unhealthyEvent } from '../prober/unhealthy-event.js';
import { startSystemdLink } from '../systemd/systemd-link.js';
import { linkAdmission } from './admission-link.js';
import type { NodeShutdownManager } from '../nodeshutdown/node-shutdown-manager.js';
import { startNodeShutdown } from '../nodeshutdown/start.js';

const STATUS_SETTLE_MS = 100;
const STATUS_FULL_PASS_MS = 5 * 60_000;
/** The kubelet API starts once the first pods are under way, or after this if they never get there (runtime away). */
const KUBELET_API_LATEST_MS = 5_000;

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
  // Before `kubeadm init` or `join` neither kubeconfig exists yet: the kubelet exits and systemd
  // restarts it until they do; bootlet runs its static pods standalone meanwhile (kubeadm restarts
  // the service once it has written them).
  if (opts.kubeconfig && !existsSync(opts.kubeconfig) && !(opts.bootstrapKubeconfig && existsSync(opts.bootstrapKubeconfig))) {
    logger.warn('Neither the kubeconfig nor the bootstrap kubeconfig exists yet: running standalone until restarted', { kubeconfig: opts.kubeconfig, bootstrapKubeconfig: opts.bootstrapKubeconfig });
    opts = { ...opts, kubeconfig: undefined, bootstrapKubeconfig: undefined };
  }
  // A kubeconfig that cannot be used is a start-up error (unless a bootstrap kubeconfig can replace
  // it); a server that does not answer is not.
  // The API side's modules (HTTPS, HTTP/2 client, certificates) load only for a node that has one:
  // a standalone start (kubeadm's first one) does not wait for them.
  const apiModule = opts.kubeconfig ? await import('../apiserver/index.js') : undefined;
  if (opts.kubeconfig && apiModule) apiModule.validateClientConfig(opts.kubeconfig, opts.bootstrapKubeconfig);
  else if (opts.bootstrapKubeconfig) logger.warn('--bootstrap-kubeconfig is ignored without --kubeconfig: running standalone', { bootstrapKubeconfig: opts.bootstrapKubeconfig });

  // One registry for every server that serves /metrics; parts report to it through callbacks.
  const metrics = new AgentMetrics({ nodeName: opts.nodeName });
  registerRestClientMetrics(metrics);
  const { runtime, images, version } = await connectRuntime(opts.containerRuntimeEndpoint, {
    requestTimeoutMs: opts.runtimeRequestTimeoutMs,
    imageServiceEndpoint: opts.imageServiceEndpoint,
    onCall: criCallMetrics(metrics),
  });
  logger.info('Container runtime initialized', { containerRuntime: version.runtimeName, version: version.runtimeVersion, apiVersion: version.runtimeApiVersion });
  const health = new RuntimeHealth(runtime, logger);
  health.start();
  // The Node's pod CIDR, once the API side reads one, goes to the runtime; its network state is read again at once.
  const podCIDR = new RuntimePodCIDR(runtime, logger, () => void health.pollNow());
  // As the kubelet at start: podCIDR from the configuration (standalone mode), if any.
  void podCIDR.update(opts.podCIDR);
  // The one desired pod set: every source feeds it, the workers subscribe, cgroups and the API side read it.
  const podConfig = new PodConfig({ sources: configuredSources(opts), logger });
  const cgroups = await startPodCgroups(
    { cgroupDriver: opts.cgroupDriver === 'systemd' ? 'systemd' : 'cgroupfs', cgroupsPerQOS: opts.cgroupsPerQOS, cgroupRoot: opts.cgroupRoot, podPidsLimit: opts.podPidsLimit },
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
    resolvConf: readResolvConf(opts.resolvConf, logger),
    clusterDNS: opts.clusterDNS,
    clusterDomain: opts.clusterDomain,
    logger,
    cgroups,
    podObjects,
  });
  const observers: PodWorkerObserver[] = [];
  const prober = new ProberManager({ runtime, logger: logger.with({ component: 'prober' }), onProbeRun: probeMetrics(metrics) });
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
  // A referenced ConfigMap, Secret or token changed: its pods sync again (a container whose env
  // could not be built is created now; the volumes rewrite themselves).
  podObjects?.onChange((uids) => {
    for (const uid of uids) workers.wake(uid);
  });
  // An API pod's new labels or annotations (same UID) reach its downwardAPI files at once.
  if (podObjects) {
    const volumes = volumeManagerFor(podObjects, logger);
    podConfig.subscribe((u) => {
      if (u.op === 'UPDATE' && u.previous.uid === u.pod.uid) volumes.podUpdated(u.pod.pod);
    });
  }
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
  const admission = linkAdmission({ nodeInfo, apply: (u) => workers.apply(u), status, observers, logger });
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
    runningContainers: () => [...cache.pods().values()].flatMap((p) => p.containers.filter((c) => c.state === ContainerState.CONTAINER_RUNNING).map((c) => ({ id: c.id, logPath: c.logPath }))),
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
  const serverSource: ServerSource = { statuses: () => status.all(), sinceLastRelistMs: () => pleg.sinceLastRelistMs(), unexpectedErrors: unexpectedErrorCount, droppedLogLines };
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

  let api: ApiSide | undefined;
  if (opts.kubeconfig && apiModule) {
    api = apiModule.startApiSide({
      kubeconfigPath: opts.kubeconfig,
      bootstrapKubeconfigPath: opts.bootstrapKubeconfig,
      certDir: opts.certDir,
      rotateCertificates: opts.rotateCertificates,
      nodeInfo,
      staticPods: podConfig.staticPods(),
      statuses: status.podStatuses(),
      logger,
      registerNode: opts.registerNode,
      // A restart asked on a mirror pod (kubectl.kubernetes.io/restartedAt): the workers do it.
      onRestartRequest: (uid, value) => workers.restartContainers(uid, value),
      onPodCIDR: (cidrs) => void podCIDR.update(cidrs),
      nodeStatusUpdateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
      nodeStatusReportFrequencyMs: opts.nodeStatusReportFrequencyMs,
      nodeLeaseDurationSeconds: opts.nodeLeaseDurationSeconds,
      // A pod that cannot run here is told as its Warning event (FailedMount for a volume kind bootlet does not mount).
      podSource: (nodePods) => startApiPodSource(nodePods, podConfig, opts.nodeName, logger, (p, reason, message) => api?.recordPodEvent({ ...p, type: 'Warning', reason, message })),
      apiPods: podConfig.apiPodView(),
      podObjects,
    });
    observers.push(api.observer);
    prober.onResult((e) => {
      const event = unhealthyEvent(e);
      const pod = event && workers.podRef(e.podUid);
      if (event && pod) api?.recordPodEvent({ ...pod, uid: e.podUid, ...event, container: e.containerName });
    });
    logger.info('API server client configured; the node runs on its own until the server answers', { kubeconfig: opts.kubeconfig });
  } else {
    logger.info('No --kubeconfig: running standalone, no API server will be contacted');
  }

  // The kubelet API (logs, exec, stats) serves nothing the first sync needs: its modules and its
  // certificate load once a pod's first sync is done (or adoption found none to start), at the
  // latest after KUBELET_API_LATEST_MS, so they do not stand between `exec` and the first pods.
  let kubeletApi: Promise<RunningKubeletServer | undefined> | undefined;
  const startKubeletApiNow = (): void => {
    clearTimeout(kubeletApiLatest);
    if (!opts.enableServer) {
      kubeletApi ??= Promise.resolve(undefined);
      return;
    }
    kubeletApi ??= import('../server/kubelet/start-kubelet-api.js')
      .then((m) => m.startKubeletApi(opts, { source: serverSource, metrics: () => metrics.render(), runtime, checks: healthChecks, api, logger }))
      .catch((err: unknown) => {
        logger.error('Cannot start the kubelet API', { err: errorMessage(err) });
        return undefined;
      });
  };
  const kubeletApiLatest = setTimeout(startKubeletApiNow, KUBELET_API_LATEST_MS);
  if (!opts.enableServer) logger.info('The kubelet API is off (enableServer: false)');
  observers.push({
    podWorkerStep: () => {
      if (!kubeletApi) startKubeletApiNow();
    },
  });

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

  let stopAdoption: (() => void) | undefined;
  const sources = startPodSources(opts, podConfig, logger, (claims) => workers.refusedClaims(claims));
  // Once the manifests have all been read, what runs without one can be told apart.
  podConfig.onSeen((seen) => {
    if (seen !== 'file') return;
    stopAdoption = startAdoption({
      readAll: async () => {
        await cache.refreshAll();
        const found = cache.pods();
        admission.runtimeFound(found.keys());
        return found;
      },
      desired: () => podConfig.all(),
      adoptIdentity: (a) => sources.adoptIdentity(a.file, a.computedUid, a.runtimeUid),
      holdBack: (found) => podConfig.holdBack(found, configSourceOf, (pods) => workers.adoptRuntimePods(pods)),
      adoptRuntimePods: (found) => {
        admission.startAdmitting();
        workers.adoptRuntimePods(found);
      },
      adopted: () => {
        podConfig.adoptionDone();
        pleg.start();
        // In the turns the first pods leave free (or while the agent waits for manifests).
        void preparePodStartCodecs();
        if (workers.snapshot().length === 0) startKubeletApiNow();
        const admitted = podConfig.all().filter((p) => admission.isAdmitted(p.uid)).map((p) => p.uid);
        // READY=1 never comes before the endpoints serve (a failure to start them ends the agent).
        void endpointsStarting.then(
          () => systemd?.sourcesReady(admitted),
          () => undefined,
        );
      },
      logger,
    });
  });

  const endpoints = await endpointsStarting;

  return {
    async shutdown() {
      stopAdoption?.();
      // A worker step or the timer after this point must not start the server on a stopping agent.
      clearTimeout(kubeletApiLatest);
      kubeletApi ??= Promise.resolve(undefined);
      await nodeShutdown?.stop();
      await systemd?.stop();
      pleg.stop();
      prober.stop();
      status.stop();
      health.stop();
      logRotation.stop();
      workers.shutdown();
      cgroups.stop();
      await Promise.allSettled([sources.stop(), endpoints.close(), kubeletApi?.then((k) => k?.close()), api?.stop()]);
      runtime.close();
    },
  };
}

// Wires the pipeline together: manifest directory → desired pods → pod workers → CRI, with the
// PLEG waking workers. Every start-up problem is one clear line and a non-zero exit.
import { readFileSync } from 'node:fs';
import { startFileSource } from '../config/file-source.js';
import { createLogger, type Logger } from '../log/logger.js';
import { createPleg } from '../pleg/pleg.js';
import type { PodWorkerObserver } from '../podworkers/observer.js';
import { PodWorkers } from '../podworkers/pod-workers.js';
import { ProberManager } from '../prober/prober-manager.js';
import { linkProber } from './prober-link.js';
import { connectRuntime, RuntimeConnectError } from '../runtime/cri-client.js';
import { ContainerLogManager } from '../runtime/container-log-manager.js';
import { CriPodRuntime } from '../runtime/pod-operations.js';
import { getRuntimePod, listRuntimePods } from '../runtime/runtime-pods.js';
import { startEndpoints, type RunningEndpoints } from '../server/endpoints.js';
import { ServerStartError } from '../server/http-server.js';
import { StatusManager } from '../status/status-manager.js';
import { onProbeResult, statusObserver } from '../status/worker-events.js';
import { BOOTLET_VERSION } from '../version.js';
import { formatDuration } from './duration.js';
import { startMemoryReducer } from './memory-reducer.js';
import { parseCommandLine, usage, UsageError } from './flags.js';
import { ConfigFileError } from './kubelet-config.js';
import { resolveOptions, type BootletOptions } from './options.js';

/** Often enough that memory settles soon after a burst, rarely enough to cost nothing measurable. */
const MEMORY_REDUCER_PERIOD_MS = 15_000;

function fail(message: string): never {
  process.stderr.write(`bootlet: ${message}\n`);
  process.exit(1);
}

function readResolvConf(): string {
  try {
    return readFileSync('/etc/resolv.conf', 'utf8');
  } catch {
    return '';
  }
}

async function runAgent(opts: BootletOptions, logger: Logger): Promise<void> {
  logger.info('Starting bootlet', {
    version: BOOTLET_VERSION,
    node: opts.nodeName,
    nodeIP: opts.nodeIP,
    podManifestPath: opts.podManifestPath,
    containerRuntimeEndpoint: opts.containerRuntimeEndpoint,
    fileCheckFrequency: formatDuration(opts.fileCheckFrequencyMs),
    syncFrequency: formatDuration(opts.syncFrequencyMs),
  });
  if (opts.ignoredConfigFields.length > 0) {
    logger.warn('KubeletConfiguration fields not implemented by bootlet are ignored', { file: opts.configFile, fields: opts.ignoredConfigFields.join(',') });
  }
  logger.info('No --kubeconfig: running standalone, no API server will be contacted');

  const { runtime, images, version } = await connectRuntime(opts.containerRuntimeEndpoint, { requestTimeoutMs: opts.runtimeRequestTimeoutMs });
  logger.info('Container runtime initialized', { containerRuntime: version.runtimeName, version: version.runtimeVersion, apiVersion: version.runtimeApiVersion });

  const podRuntime = new CriPodRuntime({
    runtime,
    images,
    rootDir: opts.rootDir,
    podLogsDir: opts.podLogsDir,
    nodeName: opts.nodeName,
    nodeIP: opts.nodeIP,
    resolvConf: readResolvConf(),
    logger,
  });
  const observers: PodWorkerObserver[] = [];
  const workers = new PodWorkers({ runtime: podRuntime, logger, syncFrequencyMs: opts.syncFrequencyMs, observers });
  const prober = new ProberManager({ runtime, logger: logger.with({ component: 'prober' }) });
  observers.push(linkProber(prober, workers, opts.nodeIP));
  const logRotation = new ContainerLogManager({
    runtime,
    logger,
    maxSizeBytes: opts.containerLogMaxSizeBytes,
    maxFiles: opts.containerLogMaxFiles,
    intervalMs: opts.containerLogMonitorIntervalMs,
  });
  logRotation.start();
  const status = new StatusManager({
    getRuntimePod: (uid) => getRuntimePod(runtime, uid),
    pods: () => workers.snapshot(),
    probes: { ready: (u, n) => prober.readiness(u, n), started: (u, n) => prober.started(u, n) },
    nodeIP: opts.nodeIP,
    runtimeName: version.runtimeName,
    logger: logger.with({ component: 'status' }),
  });
  observers.push(statusObserver(status));
  prober.onResult(onProbeResult(status));
  const pleg = createPleg({
    runtime,
    endpoint: opts.containerRuntimeEndpoint,
    runtimeName: version.runtimeName,
    logger,
    onEvent: (e) => {
      workers.wake(e.podUid);
      status.update(e.podUid);
    },
  });
  let endpoints: RunningEndpoints;
  try {
    endpoints = await startEndpoints({
      healthzBindAddress: opts.healthzBindAddress,
      healthzPort: opts.healthzPort,
      address: opts.address,
      readOnlyPort: opts.readOnlyPort,
      syncFrequencyMs: opts.syncFrequencyMs,
      source: { statuses: () => status.all(), sinceLastRelistMs: () => pleg.sinceLastRelistMs() },
      logger,
    });
  } catch (err) {
    if (err instanceof ServerStartError) fail(err.message);
    throw err;
  }
  // Events keep statuses current; the full pass is only a safety net, and it reads the runtime.
  status.start(opts.syncFrequencyMs);
  const memory = startMemoryReducer(MEMORY_REDUCER_PERIOD_MS);

  const source = startFileSource({
    path: opts.podManifestPath,
    nodeName: opts.nodeName,
    fileCheckFrequencyMs: opts.fileCheckFrequencyMs,
    logger,
    events: {
      update: (u) => workers.apply(u),
      error: () => {}, // the file source logs each refused manifest once, with file and reason
      warning: () => {},
      ready: () => {
        // Only now is the desired set complete: what runs without a manifest can be told apart.
        listRuntimePods(runtime)
          .then((found) => {
            logger.info('Manifests read, adopting running pods', { runtimePods: found.size });
            workers.adoptRuntimePods(found);
            pleg.start();
          })
          .catch((err: unknown) => fail(`reading pods back from the runtime: ${err instanceof Error ? err.message : String(err)}`));
      },
    },
  });

  const shutdown = (signal: string): void => {
    logger.info('Shutting down, leaving pods running', { signal });
    pleg.stop();
    prober.stop();
    status.stop();
    memory.stop();
    void endpoints.close();
    logRotation.stop();
    workers.shutdown();
    void source.stop().finally(() => {
      runtime.close();
      process.exit(0);
    });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

export async function main(argv: string[]): Promise<void> {
  let opts: BootletOptions;
  try {
    const cmd = parseCommandLine(argv);
    if (cmd.kind === 'help') {
      process.stdout.write(usage() + '\n');
      return;
    }
    if (cmd.kind === 'version') {
      process.stdout.write(`bootlet v${BOOTLET_VERSION}\n`);
      return;
    }
    opts = resolveOptions(cmd.flags);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigFileError) fail(err.message);
    throw err;
  }
  const logger = createLogger({ format: opts.loggingFormat, verbosity: opts.verbosity });
  try {
    await runAgent(opts, logger);
  } catch (err) {
    if (err instanceof RuntimeConnectError) fail(err.message);
    throw err;
  }
}

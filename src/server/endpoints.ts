// Starts the agent's local endpoints:
// - the unix socket `bootlet pods` reads (<root-dir>/bootlet.sock, mode 0600): /pods, /metrics, /healthz;
// - healthz (kubelet healthzPort, default 10248 on 127.0.0.1);
// - the read-only port (kubelet readOnlyPort): off unless asked for, as in the kubelet's
//   configuration defaults, since it shows every static pod's spec to anyone who can connect.
// Both TCP ports answer only requests addressed to a loopback name or address. Each endpoint
// binds on its own and keeps retrying: a taken port never stops the agent. Port 0 disables one.
import type { Logger } from '../log/logger.js';
import { pingCheck, syncLoopCheck, type HealthCheck } from './healthz.js';
import { RefusalLog } from './host-check.js';
import { createHttpServer } from './http-server.js';
import { standaloneMetrics, type MetricsRenderer } from './metrics.js';
import { bindPodsSocket } from './pods-socket.js';
import { healthzRouter, readOnlyRouter } from './routes.js';
import type { ServerSource } from './source.js';
import { SupervisedListener, type RetryOptions } from './supervised-listener.js';
import { bindTcp } from './tcp-listener.js';

export interface EndpointOptions {
  healthzBindAddress: string;
  healthzPort: number;
  /** Bind address of the read-only port (kubelet `address` / `--address`). */
  address: string;
  readOnlyPort: number;
  /** The agent's root directory: the `bootlet pods` socket lives in it. */
  rootDir: string;
  syncFrequencyMs: number;
  source: ServerSource;
  /** The agent's health checks (shared with the kubelet API); by default ping and syncloop over `source`. */
  checks?: readonly HealthCheck[];
  /** The agent's metrics registry; by default one of the endpoints' own over `source`. */
  metrics?: MetricsRenderer;
  logger: Logger;
  now?: () => number;
  retry?: RetryOptions;
}

export interface RunningEndpoints {
  /** Undefined while not (yet) bound or when disabled. */
  readonly healthzURL: string | undefined;
  readonly readOnlyURL: string | undefined;
  readonly podsSocket: string | undefined;
  close(): Promise<void>;
}

/** Resolves after each endpoint's first bind attempt; those that failed keep retrying. */
export async function startEndpoints(o: EndpointOptions): Promise<RunningEndpoints> {
  const checks = o.checks ?? [pingCheck, syncLoopCheck(() => o.source.sinceLastRelistMs(), o.syncFrequencyMs)];
  const readOnlyRoutes = readOnlyRouter(o.source, checks, o.metrics ?? standaloneMetrics(o.source, o.now ?? Date.now));
  const paths = { paths: '/pods,/metrics,/healthz' };

  const socketServer = createHttpServer(readOnlyRoutes, o.logger);
  const socket = new SupervisedListener(
    {
      what: 'the bootlet pods socket',
      fields: { rootDir: o.rootDir },
      servingFields: paths,
      bind: () => bindPodsSocket(socketServer, o.rootDir),
    },
    o.logger,
    o.retry,
  );
  const listeners = [socket];

  let readOnly: SupervisedListener | undefined;
  if (o.readOnlyPort > 0) {
    const server = createHttpServer(readOnlyRoutes, o.logger, new RefusalLog(o.logger, 'read-only port'));
    const setting = { flag: '--read-only-port', field: 'readOnlyPort' };
    readOnly = new SupervisedListener(
      {
        what: 'the read-only port',
        fields: { address: `${o.address}:${o.readOnlyPort}` },
        servingFields: paths,
        bind: () => bindTcp(server, o.address, o.readOnlyPort, setting),
      },
      o.logger,
      o.retry,
    );
    listeners.push(readOnly);
  }

  // The read-only port already answers /healthz when both are the same address and port.
  const sameAsReadOnly =
    readOnly !== undefined && o.healthzPort === o.readOnlyPort && o.healthzBindAddress === o.address;
  let healthz: SupervisedListener | undefined;
  if (o.healthzPort > 0 && !sameAsReadOnly) {
    const server = createHttpServer(healthzRouter(checks), o.logger, new RefusalLog(o.logger, 'healthz'));
    const setting = { flag: '--healthz-port', field: 'healthzPort' };
    healthz = new SupervisedListener(
      {
        what: 'healthz',
        fields: { address: `${o.healthzBindAddress}:${o.healthzPort}` },
        servingFields: { paths: '/healthz' },
        bind: () => bindTcp(server, o.healthzBindAddress, o.healthzPort, setting),
      },
      o.logger,
      o.retry,
    );
    listeners.push(healthz);
  }

  await Promise.all(listeners.map((l) => l.start()));
  return {
    get healthzURL() {
      return (sameAsReadOnly ? readOnly : healthz)?.where;
    },
    get readOnlyURL() {
      return readOnly?.where;
    },
    get podsSocket() {
      return socket.where;
    },
    close: async () => {
      await Promise.all(listeners.map((l) => l.close()));
    },
  };
}

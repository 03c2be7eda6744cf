// Starts the agent's local HTTP endpoints: the healthz port (kubelet healthzPort, default 10248
// on 127.0.0.1) and the read-only port (kubelet readOnlyPort; bootlet binds it to 127.0.0.1 by
// default because it is unauthenticated and shows every static pod's spec). Port 0 disables one.
import type { Logger } from '../log/logger.js';
import { pingCheck, syncLoopCheck } from './healthz.js';
import { listen, type ListeningServer } from './http-server.js';
import { healthzRouter, readOnlyRouter } from './routes.js';
import type { ServerSource } from './source.js';

export const DEFAULT_HEALTHZ_PORT = 10248;
export const DEFAULT_HEALTHZ_BIND_ADDRESS = '127.0.0.1';
export const DEFAULT_READ_ONLY_PORT = 10255;
export const DEFAULT_ADDRESS = '127.0.0.1';

export interface EndpointOptions {
  healthzBindAddress: string;
  healthzPort: number;
  /** Bind address of the read-only port (kubelet `address` / `--address`). */
  address: string;
  readOnlyPort: number;
  syncFrequencyMs: number;
  source: ServerSource;
  logger: Logger;
  now?: () => number;
}

export interface RunningEndpoints {
  readonly healthzURL?: string;
  readonly readOnlyURL?: string;
  close(): Promise<void>;
}

export async function startEndpoints(o: EndpointOptions): Promise<RunningEndpoints> {
  const checks = [pingCheck, syncLoopCheck(() => o.source.sinceLastRelistMs(), o.syncFrequencyMs)];
  const servers: ListeningServer[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.close()));
  };
  try {
    let readOnly: ListeningServer | undefined;
    if (o.readOnlyPort > 0) {
      readOnly = await listen(readOnlyRouter(o.source, checks, o.now ?? Date.now), o.address, o.readOnlyPort, 'the read-only port (--read-only-port)', o.logger);
      servers.push(readOnly);
    }
    let healthz: ListeningServer | undefined;
    // The read-only port already answers /healthz when both are the same address and port.
    const sameAsReadOnly = readOnly !== undefined && o.healthzPort === o.readOnlyPort && o.healthzBindAddress === o.address;
    if (o.healthzPort > 0 && !sameAsReadOnly) {
      healthz = await listen(healthzRouter(checks), o.healthzBindAddress, o.healthzPort, 'healthz (--healthz-port)', o.logger);
      servers.push(healthz);
    }
    if (readOnly) o.logger.info('Serving the read-only port', { url: readOnly.url, paths: '/pods,/metrics,/healthz' });
    if (healthz) o.logger.info('Serving healthz', { url: `${healthz.url}/healthz` });
    return { healthzURL: healthz?.url ?? (sameAsReadOnly ? readOnly?.url : undefined), readOnlyURL: readOnly?.url, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

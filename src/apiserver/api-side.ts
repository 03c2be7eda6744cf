// The API side as the rest of bootlet starts it: first a client identity (the kubeconfig, or one
// bootstrapped and kept rotated), then the agent. Until the agent runs, events wait in a small
// buffer and the node goes on without it; nothing here delays a pod.
import type { Logger } from '../log/logger.js';
import { startApiAgent, type ApiAgent, type ApiAgentOptions } from './api-agent.js';
import { startClientCredentials } from './client-credentials.js';
import type { ClusterConnection } from './kubeconfig.js';
import type { EventObject, EventRecorder, EventType } from './types.js';
import { errorMessage } from '../util/error-message.js';

export interface ApiSideOptions extends Omit<ApiAgentOptions, 'kubeconfigPath' | 'connection'> {
  kubeconfigPath: string;
  /** `--bootstrap-kubeconfig`: used to get a client certificate while the kubeconfig is not usable. */
  bootstrapKubeconfigPath?: string;
  /** `--cert-dir`. */
  certDir: string;
  /** `rotateCertificates`. */
  rotateCertificates: boolean;
}

/** The API side, plus the node's credentials for others that talk to the API server (the kubelet API's reviews and serving certificate). */
export interface ApiSide extends ApiAgent {
  /** The connection with the node's identity, once there is one. */
  connection(): ClusterConnection | undefined;
  /** Resolves when there is one (never rejects; stays pending when stopped first). */
  readonly connectionReady: Promise<ClusterConnection>;
}

/** Events recorded before the agent exists; beyond this the oldest are dropped, as the agent's own buffer does. */
const EARLY_EVENTS = 200;

type EarlyEvent = [EventObject, EventType, string, string];

/** Starts at once when the kubeconfig is usable, else when a certificate is bootstrapped. Throws KubeconfigError for unusable files. */
export function startApiSide(opts: ApiSideOptions): ApiSide {
  const logger: Logger = opts.logger;
  const creds = startClientCredentials({
    kubeconfigPath: opts.kubeconfigPath,
    bootstrapKubeconfigPath: opts.bootstrapKubeconfigPath,
    certDir: opts.certDir,
    nodeName: opts.nodeInfo.nodeName,
    rotateCertificates: opts.rotateCertificates,
    logger,
    clock: opts.clock,
  });
  const start = (connection: ClusterConnection): ApiAgent => startApiAgent({ ...opts, connection });
  let agent: ApiAgent | undefined = creds.now ? start(creds.now) : undefined;
  let connection: ClusterConnection | undefined = creds.now;
  void creds.ready.then((c) => (connection = c));
  let early: EarlyEvent[] = [];
  let stopped = false;
  if (!agent) {
    void creds.ready.then((connection) => {
      if (stopped || agent) return;
      try {
        agent = start(connection);
      } catch (e) {
        logger.error('The API side cannot start', { err: errorMessage(e) });
        return;
      }
      for (const e of early) agent.recorder.event(...e);
      early = [];
    });
  }
  const recorder: EventRecorder = {
    event: (...e: EarlyEvent) => {
      if (agent) return agent.recorder.event(...e);
      early.push(e);
      if (early.length > EARLY_EVENTS) early.shift();
    },
  };
  return {
    connection: () => connection,
    connectionReady: creds.ready,
    recorder,
    flush: (podUids, timeoutMs) => agent?.flush(podUids, timeoutMs) ?? Promise.resolve(),
    state: () => agent?.state() ?? { connected: false },
    stop: async () => {
      stopped = true;
      await Promise.all([creds.stop(), agent?.stop()]);
    },
  };
}

// The node's one pods watch: `pods?fieldSelector=spec.nodeName=<node>` (all the Node authorizer
// lets a node list), as the kubelet holds one. Two consumers hear it: the API pod source
// (src/config/api, the pods to run) and the mirror pod cache (the mirrors of the static pods).
import type { Pod } from 'kubernetes-types/core/v1';
import { Reflector } from '../../informer/reflector.js';
import type { Logger } from '../../log/logger.js';
import type { ApiClient } from '../client/client.js';
import type { ConnectionGate } from '../client/connectivity.js';
import { API_LIST_WATCH_ERRORS } from '../client/list-watch-errors.js';

export interface NodePodsOptions {
  /** Watch length asked of the server, in seconds (default: 5–10 min, randomized per watch). */
  readonly watchSeconds?: () => number;
}

/** The reflector, not started; it wakes when the gate says the server is back. */
export function nodePodsReflector(
  client: Pick<ApiClient, 'list' | 'watch'>,
  gate: ConnectionGate,
  nodeName: string,
  logger: Logger,
  opts: NodePodsOptions = {},
): Reflector<Pod> {
  const pods = new Reflector<Pod>({
    client,
    gate,
    errors: API_LIST_WATCH_ERRORS,
    path: '/api/v1/pods',
    fieldSelector: `spec.nodeName=${nodeName}`,
    what: `pods bound to ${nodeName}`,
    logger,
    watchSeconds: opts.watchSeconds,
  });
  // Back after an outage: a watch still open may be hung on a dead connection; it is opened again
  // from the last resourceVersion (a LIST only if the server says 410).
  gate.onUp(() => pods.serverBack());
  return pods;
}

// The node's own Node, watched: `nodes?fieldSelector=metadata.name=<node>` (all the Node authorizer
// lets a node list), as the kubelet's node informer. The pod CIDR the controller manager assigns reaches
// the runtime as its event arrives, admission reads the labels and taints others set on the Node, and a
// status round compares with what the server holds without asking for it (the kubelet's try 0 reads
// its lister). What the agent wrote itself (the registration, a status patch) is taken in at once, and
// a watch event that arrives after it never undoes it.
import type { Node } from 'kubernetes-types/core/v1';
import { Reflector } from '../../informer/reflector.js';
import { atLeastAsNew } from '../../informer/resource-version.js';
import type { Logger } from '../../log/logger.js';
import type { ApiClient } from '../client/client.js';
import type { ConnectionGate } from '../client/connectivity.js';
import { API_LIST_WATCH_ERRORS } from '../client/list-watch-errors.js';

export interface OwnNodeOptions {
  /** Watch length asked of the server, in seconds (default: 5–10 min, randomized per watch). */
  readonly watchSeconds?: () => number;
}

export class OwnNode {
  private current: Node | undefined;
  private readonly listeners: ((node: Node) => void)[] = [];
  private readonly reflector: Reflector<Node>;

  constructor(
    client: Pick<ApiClient, 'list' | 'watch'>,
    gate: ConnectionGate,
    private readonly nodeName: string,
    logger: Logger,
    opts: OwnNodeOptions = {},
  ) {
    this.reflector = new Reflector<Node>({
      client,
      gate,
      errors: API_LIST_WATCH_ERRORS,
      path: '/api/v1/nodes',
      fieldSelector: `metadata.name=${nodeName}`,
      what: `node ${nodeName}`,
      logger,
      watchSeconds: opts.watchSeconds,
    });
    this.reflector.addHandler({
      replaced: (items) => {
        const node = items.find((n) => n.metadata?.name === this.nodeName);
        if (node) this.take(node);
        else this.current = undefined;
      },
      event: (type, node) => {
        if (type !== 'DELETED') this.take(node);
        else if (node.metadata?.uid === this.current?.metadata?.uid) this.current = undefined;
      },
    });
    // Back after an outage: the watch may hang on a dead connection; it is opened again from its resourceVersion.
    gate.onUp(() => this.reflector.serverBack());
  }

  /** The Node as the server holds it, as far as the agent knows; undefined before it is seen (or once deleted). */
  node(): Node | undefined {
    return this.current;
  }

  /** Told each newer copy of the Node, whether a watch event or the answer to a write of ours. */
  onChange(listener: (node: Node) => void): void {
    this.listeners.push(listener);
  }

  /** The answer to a write of ours (registration, a status patch): newer than any event before it. */
  observe(node: Node): void {
    this.take(node);
  }

  start(): void {
    this.reflector.start();
  }

  stop(): Promise<void> {
    return this.reflector.stop();
  }

  private take(node: Node): void {
    if (node.metadata?.name !== this.nodeName) return;
    // Only forward: a Node recreated under the name has a later version than anything of the old one.
    if (!atLeastAsNew(node, this.current)) return;
    this.current = node;
    for (const l of this.listeners) l(node);
  }
}

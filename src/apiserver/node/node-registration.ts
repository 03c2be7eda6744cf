// Registers this node with the API server, or takes over a Node of the same name, as the kubelet's
// registerWithAPIServer does: create; if it exists, reconcile the labels the kubelet owns and keep
// everything others set (taints, other labels). The Node's UID is what lease and mirror pods point at.
import type { Node } from 'kubernetes-types/core/v1';
import type { Logger } from '../../log/logger.js';
import { ApiError, isAlreadyExists, isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import { buildNode, computeNodeStatus } from './node-status.js';
import { ATTACH_DETACH_ANNOTATION, defaultNodeLabels } from '../../k8s/node-labels.js';
import type { Clock } from '../../util/clock.js';
import type { NodeInfoSource } from '../../node/node-info.js';

export function nodePath(name: string): string {
  return `/api/v1/nodes/${encodeURIComponent(name)}`;
}

export class NodeRegistrar {
  private nodeUid: string | undefined;
  private readonly listeners: ((uid: string) => void)[] = [];

  constructor(
    private readonly client: ApiClient,
    private readonly info: NodeInfoSource,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** `registerNode`: when false, wait for someone else to create the Node. */
    private readonly registerNode = true,
  ) {}

  /** The Node's UID once registered (or found), else undefined. */
  get uid(): string | undefined {
    return this.nodeUid;
  }

  /** Called with the UID each time the node is (re-)registered. */
  onRegistered(listener: (uid: string) => void): void {
    this.listeners.push(listener);
  }

  /** The Node was found gone (404 on a status post): register again on the next round. */
  forget(): void {
    if (this.nodeUid)
      this.logger.info('Node object gone from the API server; registering again', { node: this.info.nodeName });
    this.nodeUid = undefined;
  }

  /** Makes sure the Node exists; returns it as the server has it. Throws what the caller retries. */
  async ensure(): Promise<Node | undefined> {
    if (this.nodeUid) return undefined;
    const name = this.info.nodeName;
    let existing: Node;
    if (this.registerNode) {
      // Create first, as the kubelet does: on a fresh cluster that is the one request needed.
      try {
        const created = await this.client.create<Node>(
          '/api/v1/nodes',
          buildNode(this.info, computeNodeStatus(this.info, undefined, this.clock.now())),
        );
        this.logger.info('Successfully registered node', { node: name });
        return this.registered(created);
      } catch (e) {
        if (!isAlreadyExists(e)) throw e;
      }
      existing = await this.client.get<Node>(nodePath(name));
    } else {
      try {
        existing = await this.client.get<Node>(nodePath(name));
      } catch (e) {
        if (isNotFound(e))
          throw new ApiError(
            404,
            'NotFound',
            `node "${name}" not found (registerNode is false: waiting for it to be created)`,
          );
        throw e;
      }
    }
    const patched = this.registerNode ? await this.takeOver(existing) : existing;
    return this.registered(patched);
  }

  /** The kubelet reconciles only its own default labels and the attach/detach annotation on an existing Node. */
  private async takeOver(node: Node): Promise<Node> {
    const want = defaultNodeLabels(this.info);
    const have = node.metadata?.labels ?? {};
    const labels: Record<string, string> = {};
    for (const [k, v] of Object.entries(want)) if (have[k] !== v) labels[k] = v;
    const annotations: Record<string, string> = {};
    if (node.metadata?.annotations?.[ATTACH_DETACH_ANNOTATION] !== 'true')
      annotations[ATTACH_DETACH_ANNOTATION] = 'true';
    this.logger.info('Node already registered; taking it over', { node: this.info.nodeName });
    if (Object.keys(labels).length === 0 && Object.keys(annotations).length === 0) return node;
    return this.client.patch<Node>(nodePath(this.info.nodeName), 'strategic', { metadata: { labels, annotations } });
  }

  private registered(node: Node): Node {
    const uid = node.metadata?.uid;
    if (!uid) throw new ApiError(500, 'InvalidResponse', 'Node has no metadata.uid');
    this.nodeUid = uid;
    for (const l of this.listeners) l(uid);
    return node;
  }
}

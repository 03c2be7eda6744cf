// The node status loop: compute every nodeStatusUpdateFrequency (10 s), post only when something
// changed or nodeStatusReportFrequency (5 min) passed since the last post, as the kubelet does. What
// the server holds is the watched Node (own-node.ts), as the kubelet's round reads its informer: no
// request but the post.
import type { Node, NodeStatus } from 'kubernetes-types/core/v1';
import { isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import { nodePath, type NodeRegistrar } from './node-registration.js';
import { computeNodeStatus, nodeStatusChanged, nodeStatusPatch } from './node-status.js';
import type { OwnNode } from './own-node.js';
import type { Clock } from '../../util/clock.js';
import type { EventRecorder } from '../events/event-recorder.js';
import type { NodeInfoSource } from '../../node/node-info.js';

/** The event the kubelet records when a node condition takes a status ("Node n1 status is now: NodeReady"). */
const CONDITION_EVENTS: Record<string, Record<string, string>> = {
  MemoryPressure: { False: 'NodeHasSufficientMemory', True: 'NodeHasInsufficientMemory' },
  DiskPressure: { False: 'NodeHasNoDiskPressure', True: 'NodeHasDiskPressure' },
  PIDPressure: { False: 'NodeHasSufficientPID', True: 'NodeHasInsufficientPID' },
  Ready: { True: 'NodeReady', False: 'NodeNotReady' },
};

export class NodeStatusReporter {
  private lastSent: NodeStatus | undefined;
  private lastSentAt = 0;
  /** Condition statuses as last computed here, for the transition events. */
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly client: ApiClient,
    private readonly info: NodeInfoSource,
    private readonly registrar: NodeRegistrar,
    private readonly clock: Clock,
    private readonly reportFrequencyMs: number,
    private readonly recorder: EventRecorder,
    /** The watched Node, which takes in each answer of ours too. */
    private readonly ownNode: Pick<OwnNode, 'node' | 'observe'>,
  ) {}

  private readonly roundListeners: (() => void)[] = [];

  /** The status the server holds as far as the agent knows: the watched Node's, else the last post's answer. */
  serverStatus(): NodeStatus | undefined {
    return this.ownNode.node()?.status ?? this.lastSent;
  }

  /** Whether the server has the node's status as the agent would post it now (heartbeat times aside). */
  upToDate(): boolean {
    const server = this.serverStatus();
    return !nodeStatusChanged(server, computeNodeStatus(this.info, server, this.clock.now()));
  }

  /** Told at the end of each round, posted or not, failed or not. */
  onRound(listener: () => void): void {
    this.roundListeners.push(listener);
  }

  /** One round: register if needed, then post the status if it is due. */
  async sync(): Promise<void> {
    try {
      await this.round();
    } finally {
      for (const l of this.roundListeners) l();
    }
  }

  private async round(): Promise<void> {
    const fresh = await this.registrar.ensure();
    if (fresh) {
      // Registration (or take-over) just happened: what the server has is our baseline.
      this.lastSent = fresh.metadata?.creationTimestamp && fresh.status ? fresh.status : undefined;
      this.lastSentAt = this.lastSent ? this.clock.now().getTime() : 0;
      this.ownNode.observe(fresh);
    }
    const now = this.clock.now();
    const server = this.serverStatus();
    const status = computeNodeStatus(this.info, server, now);
    this.recordTransitions(status);
    const due = now.getTime() - this.lastSentAt >= this.reportFrequencyMs;
    if (!due && !nodeStatusChanged(server, status)) return;
    try {
      const updated = await this.client.patch<Node>(
        `${nodePath(this.info.nodeName)}/status`,
        'strategic',
        nodeStatusPatch(status),
      );
      this.lastSent = updated.status ?? status;
      this.lastSentAt = now.getTime();
      this.ownNode.observe(updated);
    } catch (e) {
      if (isNotFound(e)) {
        this.registrar.forget();
        this.lastSent = undefined;
      }
      throw e;
    }
  }

  private recordTransitions(status: NodeStatus): void {
    const name = this.info.nodeName;
    for (const c of status.conditions ?? []) {
      if (this.seen.get(c.type) === c.status) continue;
      this.seen.set(c.type, c.status);
      const reason = CONDITION_EVENTS[c.type]?.[c.status];
      if (reason)
        this.recorder.event(
          { kind: 'Node', name, uid: name },
          'Normal',
          reason,
          `Node ${name} status is now: ${reason}`,
        );
    }
  }
}

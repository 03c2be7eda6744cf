// The node status loop: compute every nodeStatusUpdateFrequency (10 s), post only when something
// changed or nodeStatusReportFrequency (5 min) passed since the last post, as the kubelet does.
import type { Node, NodeStatus } from 'kubernetes-types/core/v1';
import { isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import { nodePath, type NodeRegistrar } from './node-registration.js';
import { computeNodeStatus, nodeStatusChanged, nodeStatusPatch } from './node-status.js';
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
    /** The Node's spec.podCIDRs (joined with ","), told whenever a Node read from the server has them. */
    private readonly onPodCIDR?: (podCIDRs: string) => void,
  ) {}

  /** A pod CIDR has been seen on the Node (it is immutable once set). */
  private podCIDRSeen = false;

  private notePodCIDR(node: Node | undefined): void {
    const spec = node?.spec;
    const cidrs = spec?.podCIDRs?.length ? spec.podCIDRs : spec?.podCIDR ? [spec.podCIDR] : [];
    if (cidrs.length === 0 || !this.onPodCIDR) return;
    this.podCIDRSeen = true;
    this.onPodCIDR(cidrs.join(','));
  }

  /**
   * The kubelet reads its Node every round (from its informer) for spec.podCIDRs. bootlet has no
   * watch on its Node: the registration and every status post answer with it, and while no pod CIDR
   * is known and the runtime's network is not ready (the only time one can matter) each round GETs it.
   */
  private async readPodCIDR(): Promise<void> {
    if (this.podCIDRSeen || !this.onPodCIDR || this.info.networkNotReady?.() === undefined) return;
    // A failed read never holds back the status post of this round; the next round reads again.
    const node = await this.client.get<Node>(nodePath(this.info.nodeName)).catch(() => undefined);
    this.notePodCIDR(node);
  }

  /** The status the server has from us, as it answered. */
  lastPosted(): NodeStatus | undefined {
    return this.lastSent;
  }

  /** One round: register if needed, then post the status if it is due. */
  async sync(): Promise<void> {
    const fresh = await this.registrar.ensure();
    if (fresh) {
      // Registration (or take-over) just happened: what the server has is our baseline.
      this.lastSent = fresh.metadata?.creationTimestamp && fresh.status ? fresh.status : undefined;
      this.lastSentAt = this.lastSent ? this.clock.now().getTime() : 0;
      this.notePodCIDR(fresh);
    }
    await this.readPodCIDR();
    const now = this.clock.now();
    const status = computeNodeStatus(this.info, this.lastSent, now);
    this.recordTransitions(status);
    const due = now.getTime() - this.lastSentAt >= this.reportFrequencyMs;
    if (!due && !nodeStatusChanged(this.lastSent, status)) return;
    try {
      const updated = await this.client.patch<Node>(
        `${nodePath(this.info.nodeName)}/status`,
        'strategic',
        nodeStatusPatch(status),
      );
      this.lastSent = updated.status ?? status;
      this.lastSentAt = now.getTime();
      this.notePodCIDR(updated);
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

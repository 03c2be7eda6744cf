// The node's own objects on the server: the Node (registration first, then its status every
// nodeStatusUpdateFrequency) and its Lease (renewed every quarter of its duration), one key each on
// queues of their own beside the pods, so the node's heartbeat never waits behind a pod. Back after an
// outage, each runs once at once, not at its next tick, however many ticks were held meanwhile.
import type { Logger } from '../../log/logger.js';
import type { NodeInfoSource } from '../../node/node-info.js';
import type { Clock } from '../../util/clock.js';
import type { ApiClient } from '../client/client.js';
import type { ConnectionGate } from '../client/connectivity.js';
import { KeyedQueue } from '../client/keyed-queue.js';
import type { EventRecorder } from '../events/event-recorder.js';
import { NodeLease } from './node-lease.js';
import { NodeRegistrar } from './node-registration.js';
import { NodeStatusReporter } from './node-status-reporter.js';
import type { OwnNode } from './own-node.js';

export interface NodeReportingOptions {
  readonly client: ApiClient;
  readonly gate: ConnectionGate;
  readonly info: NodeInfoSource;
  readonly ownNode: OwnNode;
  readonly events: EventRecorder;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `registerNode` (default true): create the Node; when false, only use one that exists. */
  readonly registerNode?: boolean;
  /** `nodeStatusUpdateFrequency`, default 10 s. */
  readonly updateFrequencyMs?: number;
  /** `nodeStatusReportFrequency`, default 5 min. */
  readonly reportFrequencyMs?: number;
  /** `nodeLeaseDurationSeconds`, default 40. */
  readonly leaseDurationSeconds?: number;
}

export class NodeReporting {
  private readonly registrar: NodeRegistrar;
  private readonly reporter: NodeStatusReporter;
  private readonly statusQueue: KeyedQueue;
  private readonly leaseQueue: KeyedQueue;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly o: NodeReportingOptions) {
    this.registrar = new NodeRegistrar(o.client, o.info, o.clock, o.logger, o.registerNode ?? true);
    this.reporter = new NodeStatusReporter(
      o.client,
      o.info,
      this.registrar,
      o.clock,
      o.reportFrequencyMs ?? 300_000,
      o.events,
      o.ownNode,
    );
    const lease = new NodeLease(o.client, o.info.nodeName, () => this.registrar.uid, this.leaseDuration, o.clock);
    this.statusQueue = new KeyedQueue('Updating node status', () => this.reporter.sync(), o.gate, o.logger, {
      concurrency: 1,
      failureLog: 'info',
    });
    this.leaseQueue = new KeyedQueue('Renewing node lease', () => lease.renew(), o.gate, o.logger, {
      concurrency: 1,
      failureLog: 'info',
    });
    // The Lease is owned by the Node: renewed as soon as the Node (again) exists.
    this.registrar.onRegistered(() => this.renewLease());
    this.statusQueue.runWhenBack('node');
    this.leaseQueue.runWhenBack('lease');
  }

  private get leaseDuration(): number {
    return this.o.leaseDurationSeconds ?? 40;
  }

  /** The Node's UID once registered (or found). */
  get nodeUid(): string | undefined {
    return this.registrar.uid;
  }

  /** Called with the UID each time the Node is (re-)registered, after the Lease renewal is asked. */
  onRegistered(listener: (uid: string) => void): void {
    this.registrar.onRegistered(listener);
  }

  /** Told at the end of each status round. */
  onRound(listener: () => void): void {
    this.reporter.onRound(listener);
  }

  /** Whether the server has the node's status as it would be posted now. */
  statusPosted(): boolean {
    return this.reporter.upToDate();
  }

  /** A status round now (one more after the one running, if any). */
  syncStatus(): void {
    this.statusQueue.add('node');
  }

  /** Starts the ticks and the first round (registration). */
  start(): void {
    this.timers.push(
      setInterval(() => this.syncStatus(), this.o.updateFrequencyMs ?? 10_000),
      setInterval(() => this.renewLease(), (this.leaseDuration * 1000) / 4),
    );
    for (const t of this.timers) t.unref?.();
    this.syncStatus();
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await Promise.all([this.statusQueue.stop(), this.leaseQueue.stop()]);
  }

  private renewLease(): void {
    this.leaseQueue.add('lease');
  }
}

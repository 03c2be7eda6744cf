// The EventRecorder the rest of bootlet calls: builds a core/v1 Event as the kubelet's recorder
// does (source kubelet/<node>), correlates it, and hands it to a bounded sender. The caller never
// waits. While the server is away, at most MAX_PENDING events wait (the newest kept); the oldest
// are dropped, as the kubelet's recorder drops what it cannot deliver.
import type { Event } from 'kubernetes-types/core/v1';
import type { Logger } from '../../log/logger.js';
import { describeError, isAlreadyExists, isNotFound, isUnavailable } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import type { ConnectionGate } from '../client/connectivity.js';
import { EventCorrelator } from './event-correlator.js';
import { KeyedQueue } from '../client/keyed-queue.js';
import type { Clock } from '../../util/clock.js';
import type { EventObject, EventRecorder, EventType } from './event-recorder.js';

/** The kubelet's broadcaster holds up to 1000 events; so do we, then the oldest go. */
export const MAX_PENDING_EVENTS = 1000;

let sequence = 0n;

/** `<object>.<hex nanoseconds>`, as client-go names events; a counter keeps names within one ms apart. */
export function eventName(objectName: string, now: Date): string {
  sequence = (sequence + 1n) % 1_000_000n;
  return `${objectName}.${(BigInt(now.getTime()) * 1_000_000n + sequence).toString(16)}`;
}

export function buildEvent(
  object: EventObject,
  type: EventType,
  reason: string,
  message: string,
  nodeName: string,
): Event {
  // Events about cluster-scoped objects (the Node) live in "default", as the recorder puts them.
  const namespace = object.kind === 'Node' ? 'default' : (object.namespace ?? 'default');
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { namespace },
    involvedObject: {
      kind: object.kind,
      apiVersion: 'v1',
      name: object.name,
      uid: object.uid,
      ...(object.kind === 'Pod' ? { namespace: object.namespace } : {}),
      ...(object.fieldPath ? { fieldPath: object.fieldPath } : {}),
    },
    type,
    reason,
    message,
    source: { component: 'kubelet', host: nodeName },
    reportingComponent: 'kubelet',
    reportingInstance: nodeName,
  };
}

interface Pending {
  event: Event;
  isUpdate: boolean;
}

export class EventSender implements EventRecorder {
  private readonly correlator: EventCorrelator;
  /** By event name; insertion order = age. A newer observation of one event replaces its entry. */
  private readonly pending = new Map<string, Pending>();
  private readonly queue: KeyedQueue;
  private dropped = 0;

  constructor(
    private readonly client: Pick<ApiClient, 'create' | 'patch'>,
    conn: ConnectionGate,
    private readonly nodeName: string,
    clock: Clock,
    private readonly logger: Logger,
    private readonly maxPending = MAX_PENDING_EVENTS,
  ) {
    this.correlator = new EventCorrelator(clock, eventName);
    // One at a time, as client-go's recordToSink sends them: the client's sockets go to the node,
    // lease and mirror pods first, which is what must converge when the server comes back.
    this.queue = new KeyedQueue('Sending event', (name) => this.send(name), conn, logger, { concurrency: 1 });
  }

  event(object: EventObject, type: EventType, reason: string, message: string): void {
    const c = this.correlator.correlate(buildEvent(object, type, reason, message, this.nodeName));
    if (!c) return;
    const name = c.event.metadata?.name ?? '';
    const prev = this.pending.get(name);
    this.pending.delete(name);
    // Not yet created on the server: still a create, now with the higher count.
    this.pending.set(name, { event: c.event, isUpdate: c.isUpdate && !(prev && !prev.isUpdate) });
    while (this.pending.size > this.maxPending) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.queue.remove(oldest);
      if (this.dropped++ === 0)
        this.logger.v(2).info('Dropping events while the API server is away', { pending: this.maxPending });
    }
    this.queue.add(name);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): Promise<void> {
    return this.queue.stop();
  }

  private async send(name: string): Promise<void> {
    const p = this.pending.get(name);
    if (!p) return;
    const ns = encodeURIComponent(p.event.metadata?.namespace ?? 'default');
    const base = `/api/v1/namespaces/${ns}/events`;
    try {
      if (p.isUpdate) {
        try {
          await this.client.patch<Event>(`${base}/${encodeURIComponent(name)}`, 'strategic', {
            count: p.event.count,
            lastTimestamp: p.event.lastTimestamp,
            message: p.event.message,
          });
        } catch (e) {
          // The first one never made it (or was garbage-collected): create it whole.
          if (!isNotFound(e)) throw e;
          await this.client.create<Event>(base, p.event);
        }
      } else {
        await this.client.create<Event>(base, p.event).catch((e: unknown) => {
          if (!isAlreadyExists(e)) throw e;
        });
      }
    } catch (e) {
      if (isUnavailable(e)) throw e; // kept (bounded) and retried when the server is back
      // Refused for good (403, 422...): retrying cannot help; the kubelet's recorder drops it too.
      this.logger.v(2).info('Event refused by the API server; dropped', { event: name, err: describeError(e) });
    }
    // Done, unless a newer observation arrived meanwhile: that one goes next, as an update now.
    const now = this.pending.get(name);
    if (now === p) this.pending.delete(name);
    else if (now) now.isUpdate = true;
    this.dropped = 0;
  }
}

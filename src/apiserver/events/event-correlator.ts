// The kubelet's event correlation (client-go record.EventCorrelator), so an operator sees the same
// thing: identical events become one with a count; more than 10 different messages for one
// object+reason in 10 minutes become one "(combined from similar events)" event; and a per-object
// token bucket (burst 25, one more every 5 minutes) drops the long tail of a flapping object.
import type { Event } from 'kubernetes-types/core/v1';
import { apiTime } from '../../util/api-time.js';
import type { Clock } from '../../util/clock.js';

const LRU_ENTRIES = 4096;
const AGGREGATE_MAX_EVENTS = 10;
const AGGREGATE_INTERVAL_MS = 600_000;
export const SPAM_BURST = 25;
export const SPAM_QPS = 1 / 300;

/** A Map that forgets its least recently used entries beyond a size. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.map.get(k);
    if (v !== undefined) {
      this.map.delete(k);
      this.map.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.map.delete(k);
    this.map.set(k, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

function objectKey(e: Event): string {
  const o = e.involvedObject;
  return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion].join('\u0000');
}

function eventKey(e: Event): string {
  const o = e.involvedObject;
  return [
    e.source?.component,
    e.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.fieldPath,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.message,
  ].join('\u0000');
}

function aggregateKey(e: Event): string {
  return [objectKey(e), e.type, e.reason, e.reportingComponent, e.reportingInstance].join('\u0000');
}

export interface Correlated {
  event: Event;
  /** True when this updates an event already sent (PATCH count/lastTimestamp/message), false for a new one. */
  isUpdate: boolean;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class EventCorrelator {
  private readonly aggregates = new Lru<{ messages: Set<string>; last: number }>(LRU_ENTRIES);
  private readonly seen = new Lru<{ count: number; first: string; name: string }>(LRU_ENTRIES);
  private readonly buckets = new Lru<Bucket>(LRU_ENTRIES);

  constructor(
    private readonly clock: Clock,
    private readonly newName: (objectName: string, now: Date) => string,
  ) {}

  /** The event to send for `incoming`, or undefined when the spam filter drops it. */
  correlate(incoming: Event): Correlated | undefined {
    const now = this.clock.now();
    let e = incoming;
    let key = eventKey(e);
    // Aggregation: many messages for one object+reason collapse into one combined event.
    const aKey = aggregateKey(e);
    let agg = this.aggregates.get(aKey);
    if (!agg || now.getTime() - agg.last > AGGREGATE_INTERVAL_MS) agg = { messages: new Set(), last: 0 };
    agg.messages.add(e.message ?? '');
    agg.last = now.getTime();
    this.aggregates.set(aKey, agg);
    if (agg.messages.size >= AGGREGATE_MAX_EVENTS) {
      const first = agg.messages.values().next().value as string;
      agg.messages.delete(first);
      e = { ...e, message: `(combined from similar events): ${e.message ?? ''}` };
      key = aKey;
    }
    // Deduplication: the same event again is the first one with count + 1.
    const prev = this.seen.get(key);
    const ts = apiTime(now);
    const out: Event = prev
      ? {
          ...e,
          metadata: { ...e.metadata, name: prev.name },
          count: prev.count + 1,
          firstTimestamp: prev.first,
          lastTimestamp: ts,
        }
      : {
          ...e,
          metadata: { ...e.metadata, name: this.newName(e.involvedObject.name ?? '', now) },
          count: 1,
          firstTimestamp: ts,
          lastTimestamp: ts,
        };
    this.seen.set(key, { count: out.count ?? 1, first: out.firstTimestamp ?? ts, name: out.metadata?.name ?? '' });
    // Spam filter: per object, a token bucket.
    if (!this.takeToken(objectKey(out), now.getTime())) return undefined;
    return { event: out, isUpdate: !!prev };
  }

  private takeToken(key: string, nowMs: number): boolean {
    const b = this.buckets.get(key) ?? { tokens: SPAM_BURST, at: nowMs };
    b.tokens = Math.min(SPAM_BURST, b.tokens + ((nowMs - b.at) / 1000) * SPAM_QPS);
    b.at = nowMs;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b);
    return ok;
  }
}

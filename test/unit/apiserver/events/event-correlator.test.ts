import { describe, expect, it } from 'vitest';
import { EventCorrelator, SPAM_BURST } from '../../../../src/apiserver/events/event-correlator.js';
import { buildEvent, EventSender } from '../../../../src/apiserver/events/events.js';
import { TransportError } from '../../../../src/apiserver/client/api-error.js';
import type { ApiClient } from '../../../../src/apiserver/client/client.js';
import { nullLogger } from '../../../../src/log/logger.js';
import { FakeGate } from '../client/gate.js';

const pod = { kind: 'Pod' as const, namespace: 'kube-system', name: 'etcd-n1', uid: 'abc' };

function setup(): { c: EventCorrelator; clock: { t: number; now(): Date } } {
  const clock = { t: Date.parse('2026-01-01T00:00:00Z'), now: () => new Date(clock.t) };
  let n = 0;
  return { c: new EventCorrelator(clock, (name) => `${name}.${++n}`), clock };
}

describe('EventCorrelator', () => {
  it('counts the same event again on the first one, with a new lastTimestamp', () => {
    const { c, clock } = setup();
    const first = c.correlate(buildEvent(pod, 'Warning', 'BackOff', 'Back-off restarting failed container', 'n1'))!;
    clock.t += 5000;
    const again = c.correlate(buildEvent(pod, 'Warning', 'BackOff', 'Back-off restarting failed container', 'n1'))!;
    expect(first.isUpdate).toBe(false);
    expect(again.isUpdate).toBe(true);
    expect(again.event.metadata?.name).toBe(first.event.metadata?.name);
    expect(again.event.count).toBe(2);
    expect(again.event.firstTimestamp).toBe('2026-01-01T00:00:00Z');
    expect(again.event.lastTimestamp).toBe('2026-01-01T00:00:05Z');
  });

  it('combines the 10th different message for one object and reason within 10 minutes', () => {
    const { c } = setup();
    const out = Array.from({ length: 12 }, (_, i) =>
      c.correlate(buildEvent(pod, 'Warning', 'Unhealthy', `probe failed: ${i}`, 'n1'))!,
    );
    expect(out.slice(0, 9).every((e) => !e.event.message?.startsWith('(combined'))).toBe(true);
    expect(out[9].event.message).toBe('(combined from similar events): probe failed: 9');
    expect(out[10].isUpdate).toBe(true);
    expect(out[10].event.count).toBe(2);
    expect(out[11].event.metadata?.name).toBe(out[9].event.metadata?.name);
  });

  it('lets an object burst 25 events, then one more every 5 minutes', () => {
    const { c, clock } = setup();
    const results = Array.from({ length: 30 }, (_, i) => c.correlate(buildEvent(pod, 'Normal', `R${i}`, 'm', 'n1')));
    expect(results.filter(Boolean)).toHaveLength(SPAM_BURST);
    clock.t += 299_000;
    expect(c.correlate(buildEvent(pod, 'Normal', 'Late', 'm', 'n1'))).toBeUndefined();
    clock.t += 2000;
    expect(c.correlate(buildEvent(pod, 'Normal', 'Later', 'm', 'n1'))).toBeDefined();
    // Another object has its own bucket.
    expect(c.correlate(buildEvent({ ...pod, name: 'other', uid: 'x' }, 'Normal', 'R', 'm', 'n1'))).toBeDefined();
  });

  it('builds events as the kubelet records them: source kubelet/<node>, node events in default with uid = node name', () => {
    const e = buildEvent({ kind: 'Node', name: 'n1', uid: 'n1' }, 'Normal', 'Starting', 'Starting kubelet.', 'n1');
    expect(e.metadata?.namespace).toBe('default');
    expect(e.involvedObject).toEqual({ kind: 'Node', apiVersion: 'v1', name: 'n1', uid: 'n1' });
    expect(e.source).toEqual({ component: 'kubelet', host: 'n1' });
  });
});

describe('EventSender while the server is away', () => {
  it('keeps at most the bounded number of events, dropping the oldest, and never blocks the caller', async () => {
    const gate = new FakeGate();
    gate.down();
    const created: string[] = [];
    const client = {
      create: async (_path: string, body: unknown) => {
        if (!gate.usable) throw new TransportError('refused', 'ECONNREFUSED');
        created.push(String((body as { reason: string }).reason));
        return body;
      },
      patch: async () => ({}),
    } as unknown as Pick<ApiClient, 'create' | 'patch'>;
    const sender = new EventSender(client, gate, 'n1', { now: () => new Date() }, nullLogger, 10);
    for (let i = 0; i < 100; i++)
      sender.event({ kind: 'Pod', namespace: 'ns', name: `p${i}`, uid: `u${i}` }, 'Normal', `R${i}`, 'm');
    expect(sender.pendingCount).toBe(10);
    gate.up();
    await sender.idle();
    expect(created.sort()).toEqual(Array.from({ length: 10 }, (_, i) => `R${90 + i}`).sort());
    expect(sender.pendingCount).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { ProbeHandshakes } from '../../../../src/apiserver/client/probe-handshakes.js';

const POLICY = { initialMs: 2000, maxMs: 16_000, jitter: 0, resetAfterMs: 0 };

function pacer(): { p: ProbeHandshakes; at: (ms: number) => void } {
  let now = 0;
  return { p: new ProbeHandshakes(POLICY, () => now), at: (ms) => (now = ms) };
}

describe('ProbeHandshakes', () => {
  it('never holds a probe back while nothing hangs, however many handshakes (refused connects, a server appearing)', () => {
    const { p, at } = pacer();
    for (let t = 0; t < 10; t++) {
      at(t * 200);
      expect(p.route(false, true)).toEqual({ fresh: false });
      p.answered(); // refused at once
    }
  });

  it('while probes hang: company on the open connection, a fresh connection 2, 4, 8, 16, 16 s after the last handshake', () => {
    const { p, at } = pacer();
    at(0);
    expect(p.route(false, true)).toEqual({ fresh: false }); // the first connection
    p.hangs();
    const fresh: number[] = [];
    for (let t = 1000; t <= 60_000; t += 1000) {
      at(t);
      const r = p.route(true, false);
      expect('fresh' in r).toBe(true);
      if ('fresh' in r && r.fresh) fresh.push(t);
    }
    expect(fresh).toEqual([2000, 6000, 14_000, 30_000, 46_000]);
  });

  it("with no connection to go over, a probe waits for the handshake's turn", () => {
    const { p, at } = pacer();
    at(0);
    p.route(false, true);
    p.hangs();
    at(5000); // the first probe timed out, nothing open
    expect(p.route(false, true)).toEqual({ fresh: false }); // 2 s have passed: its turn
    at(5200);
    expect(p.route(false, true)).toEqual({ waitMs: 3800 }); // the next only 4 s after
    at(9000);
    expect(p.route(false, true)).toEqual({ fresh: false });
  });

  it('an answer ends the hang: the next handshakes are free, the back-off starts again from 2 s', () => {
    const { p, at } = pacer();
    at(0);
    p.route(false, true);
    p.hangs();
    at(2000);
    expect(p.route(true, false)).toEqual({ fresh: true });
    at(6000);
    expect(p.route(true, false)).toEqual({ fresh: true });
    p.answered();
    at(6100);
    expect(p.route(false, true)).toEqual({ fresh: false });
    p.hangs();
    at(7100);
    expect(p.route(true, false)).toEqual({ fresh: false });
    at(8100);
    expect(p.route(true, false)).toEqual({ fresh: true });
  });
});

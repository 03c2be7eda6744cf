// Refused manifests are logged once per file and reason, a few new reasons at once, and the rest
// counted into one "refused again" line at most every few minutes or when the file settles.
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../../src/log/logger';
import { RefusalLog } from '../../../src/config/refusal-log';

function setup() {
  let t = Date.parse('2026-12-01T10:00:00Z');
  const { logger, lines } = memoryLogger(0);
  const log = new RefusalLog(logger, { now: () => t, burst: 3, refillMs: 60_000, summaryEveryMs: 300_000 });
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { log, records, advance: (ms: number) => (t += ms) };
}

describe('RefusalLog', () => {
  it('logs a reason once per file; the same reason again is only counted', () => {
    const { log, records } = setup();
    for (let i = 0; i < 100; i++) log.refused({ file: '/m/a.yaml', message: 'bad' });
    log.refused({ file: '/m/b.yaml', message: 'bad' });
    expect(records().map((r) => [r.msg, r.file, r.err])).toEqual([
      ['Static pod manifest refused', '/m/a.yaml', 'bad'],
      ['Static pod manifest refused', '/m/b.yaml', 'bad'],
    ]);
  });

  it('logs at most a burst of new reasons, then one more per refill period', () => {
    const { log, records, advance } = setup();
    for (let i = 0; i < 50; i++) log.refused({ file: '/m/a.yaml', message: `reason ${i}` });
    expect(records().map((r) => r.err)).toEqual(['reason 0', 'reason 1', 'reason 2']);
    advance(60_000);
    log.refused({ file: '/m/a.yaml', message: 'reason 50' });
    log.refused({ file: '/m/a.yaml', message: 'reason 51' });
    expect(records().map((r) => r.err)).toEqual(['reason 0', 'reason 1', 'reason 2', 'reason 50']);
  });

  it('tells the count at most every summary period, with the first time and the latest reason', () => {
    const { log, records, advance } = setup();
    log.refused({ file: '/m/a.yaml', message: 'first' });
    advance(1000);
    for (let i = 0; i < 10; i++) log.refused({ file: '/m/a.yaml', message: 'first' });
    expect(records()).toHaveLength(1);
    advance(300_000);
    log.refused({ file: '/m/a.yaml', message: 'first' });
    const again = records()[1]!;
    expect(again).toMatchObject({
      msg: 'Static pod manifest refused again',
      file: '/m/a.yaml',
      times: 11,
      since: '2026-12-01T10:00:01.000Z',
      err: 'first',
    });
    log.refused({ file: '/m/a.yaml', message: 'first' });
    expect(records()).toHaveLength(2);
  });

  it('tells the count every summary period even while new reasons keep getting a line of their own', () => {
    const { log, records, advance } = setup();
    for (let minute = 0; minute <= 5; minute++) {
      for (let i = 0; i < 10; i++) log.refused({ file: '/m/a.yaml', message: `m${minute} r${i}` });
      advance(60_000);
    }
    const again = records().filter((r) => r.msg === 'Static pod manifest refused again');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ times: 44, since: '2026-12-01T10:00:00.000Z', err: 'm5 r1' });
  });

  it('tells what is left uncounted when the file settles, and logs its next refusal again', () => {
    const { log, records } = setup();
    log.refused({ file: '/m/a.yaml', message: 'x' });
    log.refused({ file: '/m/a.yaml', message: 'x' });
    log.settled('/m/a.yaml');
    log.settled('/m/a.yaml');
    log.refused({ file: '/m/a.yaml', message: 'x' });
    expect(records().map((r) => [r.msg, r.times])).toEqual([
      ['Static pod manifest refused', undefined],
      ['Static pod manifest refused again', 1],
      ['Static pod manifest refused', undefined],
    ]);
  });
});

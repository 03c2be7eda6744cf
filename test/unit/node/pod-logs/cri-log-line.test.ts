// The one CRI log-line parser, against the kubelet's parseCRILog rules (pkg/kubelet/kuberuntime/logs):
// the cases `bootlet logs`, the kubelet API and the termination message relied on, and the edges.
import { describe, expect, it } from 'vitest';
import { fixedLogTime, parseCriLogLine, parseLogTime } from '../../../../src/node/pod-logs/cri-log-line.js';

const T = '2016-10-06T00:17:09.669794202Z';
const parse = (line: string) => {
  const l = parseCriLogLine(Buffer.from(line));
  return l && { time: l.time, stream: l.stream, partial: l.partial, content: l.content.toString() };
};

describe('CRI log line', () => {
  it('reads time, stream, tag and content; a full line keeps its newline, a partial one loses it', () => {
    expect(parse(`${T} stdout F log content 1\n`)).toEqual({
      time: T,
      stream: 'stdout',
      partial: false,
      content: 'log content 1\n',
    });
    expect(parse(`${T} stderr P log content 2\n`)).toEqual({
      time: T,
      stream: 'stderr',
      partial: true,
      content: 'log content 2',
    });
    // Partial lines joined give the line as written (what `bootlet logs` and kubectl print).
    expect(parse(`${T} stdout P part one, \n`)!.content + parse(`${T} stdout F part two\n`)!.content).toBe(
      'part one, part two\n',
    );
  });

  it('adds no newline to a line that has none (the unfinished end of a file)', () => {
    expect(parse(`${T} stdout F no newline`)).toMatchObject({ partial: false, content: 'no newline' });
    expect(parse(`${T} stdout P no newline`)).toMatchObject({ partial: true, content: 'no newline' });
  });

  it('keeps the content as written: spaces, an empty line, a tag-like word', () => {
    expect(parse(`${T} stdout F  two  spaces \n`)!.content).toBe(' two  spaces \n');
    expect(parse(`${T} stdout F \n`)!.content).toBe('\n');
    expect(parse(`${T} stdout P \n`)!.content).toBe('');
    expect(parse(`${T} stdout F P x\n`)!.content).toBe('P x\n');
  });

  it('decides partial by the first tag only, and reads unknown tags as full lines', () => {
    expect(parse(`${T} stdout P:more:tags x\n`)).toMatchObject({ partial: true, content: 'x' });
    expect(parse(`${T} stdout F:more x\n`)).toMatchObject({ partial: false, content: 'x\n' });
    expect(parse(`${T} stdout X x\n`)).toMatchObject({ partial: false, content: 'x\n' });
    expect(parse(`${T} stdout PX x\n`)).toMatchObject({ partial: false, content: 'x\n' });
  });

  it('is not a CRI line without a valid time, a known stream or a space after the tags', () => {
    for (const bad of [
      'garbage',
      'garbage with spaces in it\n',
      '',
      '\n',
      `${T}\n`,
      `${T} stdout\n`,
      `${T} stdout F\n`,
      `${T} stdin F x\n`,
      `${T} Stdout F x\n`,
      `${T}  stdout F x\n`,
      '2016-10-06 00:17:09Z stdout F x\n',
      '2016-13-06T00:17:09Z stdout F x\n',
      '2016-02-30T00:17:09Z stdout F x\n',
      '2017-02-29T00:17:09Z stdout F x\n',
      '2016-10-06T24:00:00Z stdout F x\n',
      '2016-10-06T00:17:09 stdout F x\n',
      '2016-10-06T00:17:09.Z stdout F x\n',
      '2016-10-06t00:17:09Z stdout F x\n',
      `${'9'.repeat(80)} stdout F x\n`,
    ])
      expect(parse(bad), JSON.stringify(bad)).toBeUndefined();
    expect(parse('2016-02-29T00:17:09Z stdout F leap day\n')).toBeDefined();
  });

  it('takes times as Go parses RFC3339Nano: any fraction (cut at ns), a comma, an offset', () => {
    expect(parse('2026-01-01T00:00:01Z stdout F x\n')).toBeDefined();
    expect(parse('2026-01-01T01:00:01.5+01:00 stdout F x\n')).toBeDefined();
    expect(parse('2026-01-01T00:00:01,25Z stdout F x\n')).toBeDefined();
    expect(parseLogTime('2026-01-01T00:00:01.000000001Z')).toBe(
      BigInt(Date.UTC(2026, 0, 1, 0, 0, 1)) * 1_000_000n + 1n,
    );
    expect(parseLogTime('2026-01-01T01:00:01.5+01:00')).toBe(BigInt(Date.UTC(2026, 0, 1, 0, 0, 1, 500)) * 1_000_000n);
    expect(parseLogTime('2026-01-01T00:00:01.1234567891Z')).toBe(parseLogTime('2026-01-01T00:00:01.123456789Z'));
    expect(parseLogTime('yesterday')).toBeUndefined();
  });

  it('prints times in the kubelet fixed form: nine digits, the offset as written, a zero offset as Z', () => {
    expect(fixedLogTime('2026-01-01T00:00:01.5Z')).toBe('2026-01-01T00:00:01.500000000Z');
    expect(fixedLogTime('2026-01-01T00:00:01Z')).toBe('2026-01-01T00:00:01.000000000Z');
    expect(fixedLogTime('2026-01-01T01:00:01.5+01:00')).toBe('2026-01-01T01:00:01.500000000+01:00');
    expect(fixedLogTime('2026-01-01T00:00:01+00:00')).toBe('2026-01-01T00:00:01.000000000Z');
    expect(fixedLogTime('2026-01-01T00:00:01,1234567891Z')).toBe('2026-01-01T00:00:01.123456789Z');
    expect(fixedLogTime('not a time')).toBe('not a time');
  });
});

// The kubelet's own tables for the node log query (pkg/kubelet/kubelet_server_journal_test.go:
// Test_newNodeLogQuery, Test_validateServices, Test_nodeLogQuery_validate), and the exact words of
// its errors (apimachinery's field errors, as the kubelet answers them).
import { describe, expect, it } from 'vitest';
import { parseGoQuery } from '../../../../src/server/node-logs/go-url-values.js';
import { parseRFC3339 } from '../../../../src/server/node-logs/go-time.js';
import {
  aggregateErrors,
  parseNodeLogQuery,
  validateNodeLogQuery,
  type NodeLogOptions,
  type NodeLogQuery,
} from '../../../../src/server/node-logs/node-log-query.js';
import { goRegexpProblem } from '../../../../src/server/node-logs/regexp-syntax.js';

const parse = (raw: string): ReturnType<typeof parseNodeLogQuery> => parseNodeLogQuery(parseGoQuery(raw));
const t = (s: string): NonNullable<ReturnType<typeof parseRFC3339>> => parseRFC3339(s)!;

describe('newNodeLogQuery (Test_newNodeLogQuery)', () => {
  const valid = '2019-12-04T02:00:00Z';
  const none = { pattern: '' } satisfies NodeLogOptions;
  const q = (services: string[], files: string[], options: Partial<NodeLogOptions> = {}): NodeLogQuery => ({
    services,
    files,
    options: { ...none, ...options },
  });
  const cases: [string, NodeLogQuery | undefined | 'error'][] = [
    ['', undefined],
    ['unknown=true', undefined],
    ['sinceTime=', undefined],
    ['sinceTime=2019-12-04+02:00:00', 'error'],
    ['sinceTime=2019-12-04+02:00:00.000', 'error'],
    ['sinceTime=2019-12-04+02', 'error'],
    ['sinceTime=2019-12-04+02:00', 'error'],
    [`sinceTime=${valid}`, q([], [], { sinceTime: t(valid) })],
    ['untilTime=', undefined],
    ['untilTime=2019-12-04+02:00:00', 'error'],
    ['untilTime=2019-12-04+02:00:00.000', 'error'],
    ['untilTime=2019-12-04+02', 'error'],
    ['untilTime=2019-12-04+02:00', 'error'],
    [`untilTime=${valid}`, q([], [], { untilTime: t(valid) })],
    ['tailLines=100', q([], [], { tailLines: 100n })],
    ['tailLines=foo', 'error'],
    ['tailLines=+', 'error'],
    ['pattern=foo', q([], [], { pattern: 'foo' })],
    ['boot=', undefined],
    ['boot=0', q([], [], { boot: 0n })],
    ['boot=-23', q([], [], { boot: -23n })],
    ['boot=foo', 'error'],
    ['boot=+', 'error'],
    ['query=', 'error'],
    ['query=+++&query=++++', 'error'],
    ['query=foo', q(['foo'], [])],
    ['query=foo&query=bar', q(['foo', 'bar'], [])],
    ['query=foo&query=%2Fbar', q(['foo'], ['/bar'])],
    ['query=%2Ffoo&query=%5Cbar', q([], ['/foo', '\\bar'])],
  ];
  it.each(cases)('%s', (raw, want) => {
    const got = parse(raw);
    if (want === 'error') expect(got.errors.length).toBeGreaterThan(0);
    else expect(got).toEqual({ errors: [], query: want });
  });

  it('words its errors as field errors (answered 400)', () => {
    expect(aggregateErrors(parse('sinceTime=2019-12-04+02:00').errors)).toBe(
      'sinceTime: Invalid value: "2019-12-04 02:00": invalid time format',
    );
    expect(aggregateErrors(parse('boot=foo&tailLines=%20').errors)).toBe(
      '[boot: Invalid value: "foo": strconv.Atoi: parsing "foo": invalid syntax, tailLines: Invalid value: " ": strconv.Atoi: parsing " ": invalid syntax]',
    );
    expect(aggregateErrors(parse('query=+++&query=++++').errors)).toBe(
      'query: Invalid value: []string{"   ", "    "}: query cannot be empty',
    );
    expect(aggregateErrors(parse('tailLines=99999999999999999999').errors)).toBe(
      'tailLines: Invalid value: "99999999999999999999": strconv.Atoi: parsing "99999999999999999999": value out of range',
    );
  });

  it('reads the query as Go does: `;` drops the pair, a bad escape drops it, `+` is a space', () => {
    expect(parse('query=a;b')).toEqual({ errors: [], query: undefined });
    expect(parse('query=%zz')).toEqual({ errors: [], query: undefined });
    expect(parse('pattern=a+b')).toMatchObject({ query: { options: { pattern: 'a b' } } });
  });
});

const checks = {
  fileProblem: (): Promise<string | undefined> => Promise.resolve(undefined),
  patternProblem: goRegexpProblem,
};
const validate = (services: string[], files: string[] = [], options: Partial<NodeLogOptions> = {}): Promise<string[]> =>
  validateNodeLogQuery({ services, files, options: { pattern: '', ...options } }, checks);

describe('validateServices (Test_validateServices)', () => {
  const cases: [string, string[], boolean][] = [
    ['one service', ['svc1'], false],
    ['two services', ['svc1', 'svc2'], false],
    ['dot service', ['svc.foo'], false],
    ['underscore service', ['svc_foo'], false],
    ['at service', ['svc@foo'], false],
    ['colon service', ['svc:foo'], false],
    ['invalid service new line', ['svc\n'], true],
    ['invalid service with dot', ['svc.foo\n'], true],
    ['invalid service with slash', ['svc/foo'], true],
    ['long service', ['svc1'.repeat(100)], true],
    ['max number of services', ['svc1', 'svc2', 'svc.foo', 'svc_foo', 'svc@foo'], true],
  ];
  it.each(cases)('%s', async (_name, services, wantErr) => {
    expect((await validate(services)).length > 0).toBe(wantErr);
  });

  it('refuses in the kubelet words: no shell character, no option, nothing but a unit name', async () => {
    expect(await validate(['svc\n'])).toEqual([
      'query: Invalid value: "svc\\n": input contains unsupported characters',
    ]);
    expect(await validate(['kubelet;reboot'])).toEqual([
      'query: Invalid value: "kubelet;reboot": input contains unsupported characters',
    ]);
    expect(await validate(['$(id)'])).toEqual(['query: Invalid value: "$(id)": input contains unsupported characters']);
    expect(await validate(['--file=x'])).toEqual([
      'query: Invalid value: "--file=x": input contains unsupported characters',
    ]);
    expect(await validate(['a'.repeat(257)])).toEqual([
      `query: Invalid value: "${'a'.repeat(257)}": length must be less than 100`,
    ]);
    expect(await validate(['a', 'b', 'c', 'd', 'e'])).toEqual(['query: Too many: 5: must have at most 4 items']);
  });
});

describe('nodeLogQuery.validate (Test_nodeLogQuery_validate)', () => {
  const since = t('2023-01-04T02:00:00Z');
  const until = t('2023-02-04T02:00:00Z');
  const cases: [string, string[], string[], Partial<NodeLogOptions>, boolean][] = [
    ['empty', [], [], {}, true],
    ['empty with options', [], [], { sinceTime: since }, true],
    ['one service', ['svc1'], [], {}, false],
    ['two services', ['svc1', 'svc2'], [], {}, false],
    ['one service one file', ['svc1'], ['/test1.log'], {}, true],
    ['two files', [], ['/test1.log', '/test2.log'], {}, true],
    ['one file options', [], ['/test1.log'], { pattern: 'foo' }, true],
    ['invalid pattern', ['svc1'], [], { pattern: 'foo\\' }, true],
    ['since', ['svc1'], [], { sinceTime: since }, false],
    ['until', ['svc1'], [], { untilTime: until }, false],
    ['since until', ['svc1'], [], { sinceTime: until, untilTime: since }, true],
    ['boot', ['svc1'], [], { boot: -1n }, false],
    ['boot out of range', ['svc1'], [], { boot: 1n }, true],
    ['tailLines', ['svc1'], [], { tailLines: 100n }, false],
    ['tailLines out of range', ['svc1'], [], { tailLines: 100000n }, false],
  ];
  it.each(cases)('%s', async (_name, services, files, options, wantErr) => {
    expect((await validate(services, files, options)).length > 0).toBe(wantErr);
  });

  it('words each refusal as the kubelet does (answered 406)', async () => {
    expect(await validate([], [], { sinceTime: since })).toEqual([
      'query: Required value: cannot be empty with options',
    ]);
    expect(await validate(['foo'], ['/bar'])).toEqual([
      'query: Invalid value: "[/bar], [foo]": cannot specify a file and service',
    ]);
    expect(await validate([], ['/foo', '\\bar'])).toEqual([
      'query: Invalid value: []string{"/foo", "\\\\bar"}: cannot specify more than one file',
    ]);
    expect(await validate([], ['/test1.log'], { tailLines: 5n })).toEqual([
      'query: Invalid value: []string{"/test1.log"}: cannot specify file with options',
    ]);
    expect(await validate(['svc1'], [], { sinceTime: until, untilTime: since })).toEqual([
      'untilTime: Invalid value: 2023-01-04 02:00:00 +0000 UTC: must be after `sinceTime`',
    ]);
    expect(await validate(['svc1'], [], { boot: 1n })).toEqual(['boot: Invalid value: 1: must be less than 1']);
    expect(await validate(['svc1'], [], { tailLines: -1n })).toEqual([
      'tailLines: Invalid value: -1: must be between 0 and 100000, inclusive',
    ]);
    expect(await validate(['svc1'], [], { tailLines: 100001n })).toEqual([
      'tailLines: Invalid value: 100001: must be between 0 and 100000, inclusive',
    ]);
    expect(await validate(['svc1'], [], { pattern: 'foo\\' })).toEqual([
      'pattern: Invalid value: "foo\\\\": error parsing regexp: trailing backslash at end of expression: ``',
    ]);
    expect(await validate(['svc1'], [], { pattern: '(?=x)' })).toEqual([
      'pattern: Invalid value: "(?=x)": error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
    ]);
    expect(await validate(['svc1'], [], { pattern: 'error|warn(ing)?' })).toEqual([]);
  });

  it('asks for the one file only when the rest allows it, and says what stat said', async () => {
    const asked: string[] = [];
    const problem = await validateNodeLogQuery(
      { services: [], files: ['/nope.log'], options: { pattern: '' } },
      {
        fileProblem: (f) => {
          asked.push(f);
          return Promise.resolve('stat /var/log/nope.log: no such file or directory');
        },
        patternProblem: goRegexpProblem,
      },
    );
    expect(asked).toEqual(['/nope.log']);
    expect(problem).toEqual([
      'query: Invalid value: []string{"/nope.log"}: stat /var/log/nope.log: no such file or directory',
    ]);
  });

  it('aggregates as ToAggregate does: one as it is, several bracketed, a repeat once', () => {
    expect(aggregateErrors(['a'])).toBe('a');
    expect(aggregateErrors(['a', 'b', 'a'])).toBe('[a, b]');
  });
});

// journalctl's arguments (the kubelet's Test_getLoggingCmd, Linux), which services count as the
// journal's, and the run itself against a stand-in journalctl that says what it was given.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseRFC3339 } from '../../../../src/server/node-logs/go-time.js';
import { copyJournal, journalctlArgs, journalUnits, logsToJournal } from '../../../../src/server/node-logs/journal.js';
import { useTmpDir } from '../../../support/tmp.js';

const dir = useTmpDir('journal-unit');
const none = { pattern: '' };

describe('journalctl arguments (Test_getLoggingCmd, linux)', () => {
  it.each([
    ['basic', [], ['--utc', '--no-pager', '--output=short-precise']],
    ['two providers', ['p1', 'p2'], ['--utc', '--no-pager', '--output=short-precise', '--unit=p1', '--unit=p2']],
    ['empty provider', ['p1', '', 'p2'], ['--utc', '--no-pager', '--output=short-precise', '--unit=p1', '--unit=p2']],
  ])('%s', (_name, services, want) => {
    expect(journalctlArgs(none, services)).toEqual(want);
  });

  it('adds the options in the kubelet order, each one argument (--until is the untilTime)', () => {
    expect(
      journalctlArgs(
        {
          sinceTime: parseRFC3339('2024-05-06T07:08:09Z')!,
          untilTime: parseRFC3339('2024-05-06T08:00:00Z')!,
          tailLines: 20n,
          pattern: 'error .* (x|y)',
          boot: -1n,
        },
        ['kubelet'],
      ),
    ).toEqual([
      '--utc',
      '--no-pager',
      '--output=short-precise',
      '--since=2024-5-6 7:8:9 UTC',
      '--until=2024-5-6 8:0:0 UTC',
      '--pager-end',
      '--lines=20',
      '--unit=kubelet',
      '--grep=error .* (x|y)',
      '--boot',
      '-1',
    ]);
  });

  it('counts a service as the journal one when journalctl lists <service>.service (a substring, as the kubelet)', () => {
    const units = 'containerd.service\nkubelet.service\n';
    expect(logsToJournal(units, 'kubelet')).toBe(true);
    expect(logsToJournal(units, 'let')).toBe(true);
    expect(logsToJournal(units, 'kube-proxy')).toBe(false);
    expect(logsToJournal(undefined, 'kubelet')).toBe(false);
  });
});

function standIn(body: string): string {
  const f = join(dir, `journalctl-${Math.random().toString(36).slice(2)}`);
  writeFileSync(f, `#!/bin/sh\n${body}\n`);
  chmodSync(f, 0o755);
  return f;
}

function collect(out: PassThrough): () => string {
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  return () => text;
}

describe('running journalctl', () => {
  it('lists the units with --field _SYSTEMD_UNIT, and none when journalctl fails', async () => {
    const ok = standIn('[ "$1 $2" = "--field _SYSTEMD_UNIT" ] && printf "kubelet.service\\n"');
    expect(await journalUnits(ok, AbortSignal.timeout(10_000))).toBe('kubelet.service\n');
    expect(await journalUnits(standIn('echo no journal >&2; exit 1'), AbortSignal.timeout(10_000))).toBeUndefined();
    expect(await journalUnits(join(dir, 'missing'), AbortSignal.timeout(10_000))).toBeUndefined();
  });

  it('streams stdout and stderr into the answer, each argument as given (no shell)', async () => {
    const out = new PassThrough();
    const text = collect(out);
    const cmd = standIn('for a in "$@"; do echo "arg:$a"; done; echo "from stderr" >&2; exit 1');
    expect(await copyJournal(cmd, ['--unit=a b', '--grep=$(id);x'], out, AbortSignal.timeout(10_000))).toBe('exited');
    expect(text()).toContain('arg:--unit=a b\narg:--grep=$(id);x\n');
    expect(text()).toContain('from stderr\n');
  });

  it('says when journalctl could not be run, and kills it at the deadline', async () => {
    const out = new PassThrough();
    expect(await copyJournal(join(dir, 'missing'), [], out, AbortSignal.timeout(10_000))).toBe('not-started');
    const slow = standIn('echo started; exec sleep 30');
    const text = collect(out);
    const ctl = new AbortController();
    const run = copyJournal(slow, [], out, ctl.signal);
    await new Promise((r) => setTimeout(r, 300));
    ctl.abort();
    expect(await run).toBe('exited');
    expect(text()).toContain('started');
  });
});

// `bootlet logs` from the log directories alone (no agent): the pod found by name, the current
// and the previous container instance, kubectl's rendering of CRI lines, and following across a
// rotation and a restart.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runLogsCommand } from '../../../src/cli/logs-command.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

const tmp = useTmpDir('logs');
const logs = path.join(tmp, 'pods');
const root = path.join(tmp, 'root'); // no agent socket there
const OLD = 'a'.repeat(32);
const UID = 'b'.repeat(32);

function write(dir: string, container: string, restart: number, lines: string[]): string {
  const d = path.join(logs, dir, container);
  fs.mkdirSync(d, { recursive: true });
  const f = path.join(d, `${restart}.log`);
  fs.writeFileSync(f, lines.join(''));
  return f;
}

const line = (t: string, s: string, tag: 'F' | 'P', c: string) =>
  `2025-01-01T00:00:0${t}.000000001Z ${s} ${tag} ${c}\n`;

async function logs_(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runLogsCommand(
    [...argv, '--root-dir', root, '--pod-logs-dir', logs],
    (s) => (out += s),
    (s) => (err += s),
  );
  return { code, out, err };
}

// An earlier version of the pod (another UID) whose logs are still there, and the current one.
write(`kube-system_etcd-node1_${OLD}`, 'etcd', 0, [line('1', 'stdout', 'F', 'old pod')]);
fs.utimesSync(path.join(logs, `kube-system_etcd-node1_${OLD}`, 'etcd', '0.log'), new Date(0), new Date(0));
fs.utimesSync(path.join(logs, `kube-system_etcd-node1_${OLD}`, 'etcd'), new Date(0), new Date(0));
fs.utimesSync(path.join(logs, `kube-system_etcd-node1_${OLD}`), new Date(0), new Date(0));
write(`kube-system_etcd-node1_${UID}`, 'etcd', 0, [
  line('1', 'stdout', 'F', 'first run'),
  line('2', 'stderr', 'F', 'crashed'),
]);
write(`kube-system_etcd-node1_${UID}`, 'etcd', 1, [
  line('3', 'stdout', 'P', 'part one, '),
  line('3', 'stdout', 'F', 'part two'),
  line('4', 'stderr', 'F', 'ready'),
]);
write(`kube-system_kube-apiserver-node1_${'c'.repeat(32)}`, 'kube-apiserver', 0, [
  line('1', 'stdout', 'F', 'apiserver'),
]);
write(`kube-system_kube-apiserver-node1_${'c'.repeat(32)}`, 'sidecar', 0, [line('1', 'stdout', 'F', 'sidecar')]);

describe('bootlet logs without an agent', () => {
  it("prints the current instance's log as kubectl logs does, joining partial lines", async () => {
    const r = await logs_('etcd-node1');
    expect(r).toEqual({ code: 0, out: 'part one, part two\nready\n', err: '' });
  });

  it('finds the pod by the name without the node suffix when that is unique, and the previous instance with -p', async () => {
    const r = await logs_('etcd', '--previous', '--timestamps');
    expect(r.out).toBe('2025-01-01T00:00:01.000000001Z first run\n2025-01-01T00:00:02.000000001Z crashed\n');
  });

  it('asks for a container when the pod has several, and says when there is no previous instance', async () => {
    const several = await logs_('kube-apiserver-node1');
    expect(several.code).toBe(1);
    expect(several.err).toContain(
      'a container name must be specified for pod kube-apiserver-node1, choose one of: [kube-apiserver sidecar]',
    );
    expect((await logs_('kube-apiserver-node1', 'sidecar')).out).toBe('sidecar\n');
    const prev = await logs_('kube-apiserver-node1', '-c', 'sidecar', '-p');
    expect(prev.err).toContain('previous terminated container "sidecar" in pod "kube-apiserver-node1" not found');
    expect((await logs_('nope')).err).toContain('pod "nope" not found');
    expect((await logs_()).code).toBe(1);
  });

  it('follows appends, a rotation and a restart of the container', async () => {
    const dir = `kube-system_sched-node1_${'d'.repeat(32)}`;
    const f0 = write(dir, 'sched', 0, [line('1', 'stdout', 'F', 'one')]);
    let out = '';
    let err = '';
    const ac = new AbortController();
    const done = runLogsCommand(
      ['sched-node1', '-f', '--root-dir', root, '--pod-logs-dir', logs],
      (s) => (out += s),
      (s) => (err += s),
      ac.signal,
    );
    await waitFor(() => out === 'one\n', { timeoutMs: 10_000, what: 'first line' });
    fs.appendFileSync(f0, line('2', 'stdout', 'F', 'two'));
    await waitFor(() => out.endsWith('two\n'), { timeoutMs: 10_000, what: 'appended line' });
    // Rotation as the log manager does it: rename away, the runtime reopens a new file.
    fs.appendFileSync(f0, line('3', 'stdout', 'F', 'three'));
    fs.renameSync(f0, `${f0}.20250101-000003`);
    fs.writeFileSync(f0, line('4', 'stdout', 'F', 'four'));
    await waitFor(() => out.endsWith('three\nfour\n'), { timeoutMs: 10_000, what: 'lines across the rotation' });
    write(dir, 'sched', 1, [line('5', 'stdout', 'F', 'after restart')]);
    await waitFor(() => out.endsWith('after restart\n'), {
      timeoutMs: 10_000,
      what: 'line of the restarted container',
    });
    expect(err).toContain('the container restarted');
    ac.abort();
    expect(await done).toBe(0);
    expect(out).toBe('one\ntwo\nthree\nfour\nafter restart\n');
  });
});

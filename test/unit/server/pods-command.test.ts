import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FLAG_OPTIONS } from '../../../src/cli/settings/flag-options.js';
import { DEFAULT_ROOT_DIR, runPodsCommand } from '../../../src/cli/pods-command.js';
import { createLogger } from '../../../src/log/logger.js';
import { startEndpoints, type RunningEndpoints } from '../../../src/server/endpoints.js';
import { useTmpDir } from '../../support/tmp.js';
import { T0 } from '../status/fixtures.js';
import { FakeSource, pendingEntry, runningEntry } from './fake-source.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
const tmp = useTmpDir('pods-command');
let server: RunningEndpoints | undefined;
let dirs = 0;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Starts the agent's endpoints (socket only) and returns its root dir. */
async function agent(source: FakeSource): Promise<string> {
  const rootDir = path.join(tmp, `root${dirs++}`);
  server = await startEndpoints({
    healthzBindAddress: '127.0.0.1',
    healthzPort: 0,
    address: '127.0.0.1',
    readOnlyPort: 0,
    rootDir,
    syncFrequencyMs: 60_000,
    source,
    logger,
  });
  return rootDir;
}

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runPodsCommand(
    argv,
    (s) => (out += s),
    (s) => (err += s),
    () => T0 + 5 * 60_000 + 12_000,
  );
  return { code, out, err };
}

describe('bootlet pods', () => {
  it('prints a kubectl-like table of the running agent’s pods', async () => {
    const source = new FakeSource();
    source.entries = [pendingEntry(), runningEntry()];
    const root = await agent(source);
    const r = await run(['--root-dir', root]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(
      [
        'NAMESPACE     NAME         READY   STATUS        RESTARTS   AGE',
        'kube-system   etcd-node1   0/1     Terminating   0          5m12s',
        'default       web-node1    1/1     Running       0          5m12s',
        '',
      ].join('\n'),
    );
  });

  it('adds IP and NODE with -o wide', async () => {
    const source = new FakeSource();
    source.entries = [runningEntry()];
    const root = await agent(source);
    const r = await run(['-o', 'wide', `--root-dir=${root}`]);
    expect(r.out.split('\n')[0]).toBe('NAMESPACE   NAME        READY   STATUS    RESTARTS   AGE     IP          NODE');
    expect(r.out.split('\n')[1]).toBe('default     web-node1   1/1     Running   0          5m12s   10.0.0.11   node1');
  });

  it('prints the PodList with -o json', async () => {
    const source = new FakeSource();
    source.entries = [runningEntry()];
    const root = await agent(source);
    const r = await run(['-ojson', '--root-dir', root]);
    const list = JSON.parse(r.out) as { kind: string; items: Array<{ metadata: { name: string } }> };
    expect(list.kind).toBe('PodList');
    expect(list.items[0]?.metadata.name).toBe('web-node1');
  });

  it('says "No resources found" when nothing runs', async () => {
    const root = await agent(new FakeSource());
    expect(await run(['--root-dir', root])).toEqual({ code: 0, out: '', err: 'No resources found\n' });
  });

  it('says in one line that no agent runs with that root dir', async () => {
    const root = path.join(tmp, 'never-ran');
    const r = await run(['--root-dir', root]);
    expect(r).toEqual({
      code: 1,
      out: '',
      err: `bootlet pods: no bootlet agent is running with --root-dir=${root}: ${root}/bootlet.sock does not exist\n`,
    });
  });

  it('says in one line that the agent stopped when only its socket is left', async () => {
    const root = path.join(tmp, 'killed');
    fs.mkdirSync(root);
    const sock = path.join(root, 'bootlet.sock');
    const s = net.createServer();
    await new Promise<void>((r) => s.listen(`${sock}.x`, r));
    fs.renameSync(`${sock}.x`, sock);
    await new Promise<void>((r) => s.close(() => r()));
    const r = await run([`--root-dir=${root}`]);
    expect(r).toEqual({
      code: 1,
      out: '',
      err: `bootlet pods: no bootlet agent is running with --root-dir=${root}: nothing serves ${sock}\n`,
    });
  });

  it('looks where the agent puts its socket by default', () => {
    expect(DEFAULT_ROOT_DIR).toBe(FLAG_OPTIONS.rootDir.default);
  });

  it('points away from the read-only port it used to read', async () => {
    const r = await run(['--read-only-port', '10255']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      "--read-only-port is not used any more: bootlet pods reads the agent's socket under --root-dir",
    );
  });

  it('rejects a bad output format', async () => {
    const r = await run(['-o', 'yaml']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('invalid output format "yaml": must be wide or json');
  });
});

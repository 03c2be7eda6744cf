import { afterEach, describe, expect, it } from 'vitest';
import { runPodsCommand } from '../../../src/cli/pods-command.js';
import { createLogger } from '../../../src/log/logger.js';
import { startEndpoints, type RunningEndpoints } from '../../../src/server/endpoints.js';
import { freePort } from '../../support/ports.js';
import { T0 } from '../status/fixtures.js';
import { FakeSource, pendingEntry, runningEntry } from './fake-source.js';

const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
let server: RunningEndpoints | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function agent(source: FakeSource): Promise<number> {
  const port = await freePort();
  server = await startEndpoints({ healthzBindAddress: '127.0.0.1', healthzPort: 0, address: '127.0.0.1', readOnlyPort: port, syncFrequencyMs: 60_000, source, logger });
  return port;
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
    const port = await agent(source);
    const r = await run(['--read-only-port', String(port)]);
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
    const port = await agent(source);
    const r = await run(['-o', 'wide', `--read-only-port=${port}`]);
    expect(r.out.split('\n')[0]).toBe('NAMESPACE   NAME        READY   STATUS    RESTARTS   AGE     IP          NODE');
    expect(r.out.split('\n')[1]).toBe('default     web-node1   1/1     Running   0          5m12s   10.0.0.11   node1');
  });

  it('prints the PodList with -o json', async () => {
    const source = new FakeSource();
    source.entries = [runningEntry()];
    const port = await agent(source);
    const r = await run(['-ojson', '--read-only-port', String(port)]);
    const list = JSON.parse(r.out) as { kind: string; items: Array<{ metadata: { name: string } }> };
    expect(list.kind).toBe('PodList');
    expect(list.items[0]?.metadata.name).toBe('web-node1');
  });

  it('says "No resources found" when nothing runs', async () => {
    const port = await agent(new FakeSource());
    expect(await run(['--read-only-port', String(port)])).toEqual({ code: 0, out: '', err: 'No resources found\n' });
  });

  it('explains that the agent is not reachable', async () => {
    const port = await freePort();
    const r = await run(['--read-only-port', String(port)]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`bootlet pods: cannot reach the bootlet agent at http://127.0.0.1:${port}: connection refused; is it running with --read-only-port?\n`);
  });

  it('rejects a bad output format', async () => {
    const r = await run(['-o', 'yaml']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('invalid output format "yaml": must be wide or json');
  });
});

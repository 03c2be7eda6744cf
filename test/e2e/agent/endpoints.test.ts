// The packaged agent's local endpoints as a local user meets them: `bootlet pods` over a socket
// only root may open, no unauthenticated TCP port unless asked for, Host checked on the ports
// that exist (DNS rebinding), and a port squatted by another process costing one log line, not
// the node's pods.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { BOOTLET_EXE, type RunningAgent } from '../../support/agent.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-ep';
const h = useAgentHarness('endpoints', NODE);
const socketPath = path.join(h.rootDir, 'bootlet.sock');
const run = promisify(execFile);
let agent: RunningAgent;
let healthzPort: number;
let readOnlyPort: number;
let squatter: net.Server | undefined;

const MANIFEST = `apiVersion: v1
kind: Pod
metadata: {name: secretive, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    env: [{name: DB_PASSWORD, value: hunter2}]
`;

/** TCP ports the process listens on, from its socket descriptors and the kernel's tables. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      /* closed meanwhile */
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && inodes.has(f[9] ?? '')) ports.add(parseInt(f[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

function getWithHost(port: number, p: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: p, headers: { Host: host }, agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

const portErrors = (a: RunningAgent): Record<string, unknown>[] =>
  a.records().filter((r) => r.msg === 'Cannot serve healthz; the agent runs on and retries with back-off');

beforeAll(async () => {
  [healthzPort, readOnlyPort] = await freePorts(2);
  // Let other users walk down to the root dir, so that only the socket's own mode keeps them out.
  fs.chmodSync(h.dir, 0o755);
  fs.mkdirSync(h.rootDir, { mode: 0o755 });
  squatter = net.createServer();
  await new Promise<void>((r) => squatter!.listen(healthzPort, '127.0.0.1', r));
  agent = h.launch({ healthzPort });
  h.write('secretive.yaml', MANIFEST);
});

afterAll(async () => {
  await new Promise<void>((r) => (squatter ? squatter.close(() => r()) : r()));
});

describe('local endpoints of the packaged agent', () => {
  it('runs its pods while another process holds the healthz port, and says so in one line', async () => {
    await waitFor(
      async () =>
        (await h.pods('secretive'))[0]?.containers.some(
          (c) => c.name === 'main' && c.state === ContainerState.CONTAINER_RUNNING,
        ),
      {
        timeoutMs: 90_000,
        what: 'the pod to run despite the squatted port',
      },
    );
    expect(agent.proc.exitCode).toBeNull();
    expect(portErrors(agent)).toEqual([
      expect.objectContaining({
        address: `127.0.0.1:${healthzPort}`,
        err: `port ${healthzPort} is already in use by another process (another kubelet or bootlet?); stop it or choose another with --healthz-port (healthzPort in the config file)`,
      }),
    ]);
  });

  it('serves `bootlet pods` on a socket that only root may open', async () => {
    const table = await waitFor(
      async () => {
        const { stdout } = await run(BOOTLET_EXE, ['pods', `--root-dir=${h.rootDir}`]);
        return /secretive-node-ep\s+1\/1\s+Running/.test(stdout) ? stdout : undefined;
      },
      { timeoutMs: 60_000, what: 'bootlet pods to show the pod Running' },
    );
    expect(table.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS/);
    const { stdout } = await run(BOOTLET_EXE, ['pods', '-o', 'json', `--root-dir=${h.rootDir}`]);
    expect(stdout).toContain('hunter2'); // root sees the spec, as in the manifest
    const st = fs.lstatSync(socketPath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o7777).toBe(0o600);
    expect(st.uid).toBe(0);
  });

  it('refuses an unprivileged user, in one line', async () => {
    const asNobody = ['--reuid=65534', '--regid=65534', '--clear-groups'];
    await run('setpriv', [...asNobody, 'test', '-S', socketPath]); // the user can reach the socket: only its mode stops them
    const r = await run('setpriv', [...asNobody, BOOTLET_EXE, 'pods', '-o', 'json', `--root-dir=${h.rootDir}`]).then(
      () => ({ code: 0, stdout: 'unexpected success', stderr: '' }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `bootlet pods: permission denied opening ${socketPath}: run bootlet pods as root (only root may read the agent's pods)\n`,
    );
    // Not just the client giving up: the socket itself turns the user away.
    const raw = await run('setpriv', [
      ...asNobody,
      'curl',
      '-sS',
      '--unix-socket',
      socketPath,
      'http://localhost/pods',
    ]).then(
      (o) => ({ code: 0, out: o.stdout }),
      (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
    );
    expect(raw.code).toBe(7); // curl: could not connect
    expect(raw.out).not.toContain('hunter2');
  });

  it('binds healthz once the squatter goes, with no read-only port by default', async () => {
    await new Promise<void>((r) => squatter!.close(() => r()));
    squatter = undefined;
    await waitFor(async () => (await getWithHost(healthzPort, '/healthz', `127.0.0.1:${healthzPort}`)).body === 'ok', {
      timeoutMs: 60_000,
      what: 'healthz to answer once the port is free',
    });
    await agent.waitForLog((r) => r.msg === 'Serving healthz', 'Serving healthz');
    expect(portErrors(agent)).toHaveLength(1); // the retries with the same reason said nothing more
    // The only TCP port the agent listens on is healthz: no unauthenticated /pods.
    expect(listeningPorts(agent.proc.pid!)).toEqual([healthzPort]);
    expect(agent.records().some((r) => r.msg === 'Serving the read-only port')).toBe(false);
    expect(await getWithHost(healthzPort, '/healthz', 'localhost')).toMatchObject({ status: 200 });
    expect(await getWithHost(healthzPort, '/healthz', `rebind.attacker.example:${healthzPort}`)).toMatchObject({
      status: 403,
    });
  });

  it('with --read-only-port, answers a loopback Host and refuses a foreign one; a killed agent’s socket is taken over', async () => {
    await agent.kill('SIGKILL'); // leaves its socket behind
    expect(fs.lstatSync(socketPath).isSocket()).toBe(true);
    agent = h.launch({ healthzPort, readOnlyPort });
    await agent.waitForLog((r) => r.msg === 'Serving the read-only port', 'Serving the read-only port', 60_000);
    await agent.waitForLog(
      (r) => r.msg === 'Serving the bootlet pods socket',
      'Serving the bootlet pods socket',
      60_000,
    );
    const pods = await waitFor(
      async () => {
        const r = await getWithHost(readOnlyPort, '/pods', `localhost:${readOnlyPort}`);
        return r.status === 200 && r.body.includes('secretive-node-ep') ? r : undefined;
      },
      { timeoutMs: 60_000, what: 'the read-only port to list the pod' },
    );
    expect(pods.body).toContain('"kind":"PodList"');
    expect((await getWithHost(readOnlyPort, '/pods', `127.0.0.1:${readOnlyPort}`)).status).toBe(200);
    expect((await getWithHost(readOnlyPort, '/pods', `[::1]:${readOnlyPort}`)).status).toBe(200);
    for (let i = 0; i < 5; i++) {
      const refused = await getWithHost(readOnlyPort, '/pods', `rebind.attacker.example:${readOnlyPort}`);
      expect(refused.status).toBe(403);
      expect(refused.body).not.toContain('hunter2');
    }
    expect(agent.records().filter((r) => r.endpoint === 'read-only port' && r.severity === 'warning')).toHaveLength(1);
    const { stdout } = await run(BOOTLET_EXE, ['pods', `--root-dir=${h.rootDir}`]);
    expect(stdout).toMatch(/secretive-node-ep\s+1\/1\s+Running/);
    expect(fs.lstatSync(socketPath).mode & 0o7777).toBe(0o600);
  });

  it('removes its socket when stopped', async () => {
    h.remove('secretive.yaml');
    await waitFor(async () => (await h.pods('secretive')).length === 0, {
      timeoutMs: 60_000,
      what: 'the pod to be removed',
    });
    expect(await agent.kill('SIGTERM')).toBe(0);
    expect(fs.existsSync(socketPath)).toBe(false);
  });
});

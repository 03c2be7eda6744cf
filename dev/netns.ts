// A network namespace for a test's pod network: containerd (and the agent, whose probes reach pod
// IPs as the kubelet's do from the node) run inside it, so the CNI bridge, the veths and the
// portmap iptables rules exist only there and pod traffic never reaches the machine's own network.
// It has only lo (up) until CNI adds the bridge; nothing routes out of it.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { isAlive, run, tryRun } from './exec.js';

/** `ip netns add` makes its namespaces here. */
const NETNS_DIR = '/run/netns';
/** Names are `bootlet-<owner pid>-<random>`, so a later run can remove the ones a dead run left. */
const PREFIX = 'bootlet-';

export interface TestNetns {
  readonly name: string;
  /** The bind mount that holds it, what `nsenter --net=` takes. */
  readonly path: string;
  /** Prefix for a command that must run inside (`wrap` of startContainerd / startAgent). */
  readonly wrap: string[];
  /** Runs a command inside; returns its stdout. */
  exec(cmd: string[], timeoutMs?: number): Promise<string>;
  /**
   * Makes 127.0.0.1:`port` of the host reachable as 127.0.0.1:`port` inside (the fake API server
   * for an agent that runs inside), through a unix socket: no interface or route joins the two.
   */
  forwardPort(port: number): Promise<void>;
  /** Stops the forwarders and deletes the namespace (its last process leaving ends it). Never throws. */
  remove(): Promise<void>;
}

/** Removes the namespaces of runs whose process is gone. */
export async function cleanupStaleNetns(): Promise<void> {
  let names: string[] = [];
  try {
    names = fs.readdirSync(NETNS_DIR);
  } catch {
    return;
  }
  for (const n of names) {
    const m = /^bootlet-(\d+)-[0-9a-f]+$/.exec(n);
    if (m && !isAlive(Number(m[1]))) await tryRun('ip', ['netns', 'del', n], { timeoutMs: 10_000 });
  }
}

// The inside half of a forwarded port: listens in the namespace, pipes each connection to the unix socket.
const INSIDE_FORWARDER = `
const net = require('node:net');
const [port, sock] = process.argv.slice(1);
net.createServer((c) => { const u = net.connect(sock); c.pipe(u); u.pipe(c); const end = () => { c.destroy(); u.destroy(); }; c.on('error', end); u.on('error', end); c.on('close', end); u.on('close', end); })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\\n'));
// Its stdin is a pipe from the test: when the test process dies, so does the forwarder.
process.stdin.on('end', () => process.exit(0)).on('error', () => process.exit(0)).resume();
`;

export async function createNetns(): Promise<TestNetns> {
  await cleanupStaleNetns();
  const name = `${PREFIX}${process.pid}-${randomBytes(3).toString('hex')}`;
  await run('ip', ['netns', 'add', name], { timeoutMs: 10_000 });
  const nsPath = path.join(NETNS_DIR, name);
  const wrap = ['nsenter', `--net=${nsPath}`, '--'];
  const children: ChildProcess[] = [];
  const servers: net.Server[] = [];
  const sockDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bootlet-netns-'));
  const remove = async (): Promise<void> => {
    for (const c of children) c.kill('SIGKILL');
    for (const s of servers) s.close();
    fs.rmSync(sockDir, { recursive: true, force: true });
    await tryRun('ip', ['netns', 'del', name], { timeoutMs: 10_000 });
  };
  try {
    await run('ip', ['-n', name, 'link', 'set', 'lo', 'up'], { timeoutMs: 10_000 });
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    name,
    path: nsPath,
    wrap,
    exec: (cmd, timeoutMs = 30_000) => run(wrap[0]!, [...wrap.slice(1), ...cmd], { timeoutMs }),
    async forwardPort(port) {
      const sock = path.join(sockDir, `${port}.sock`);
      const outside = net.createServer((c) => {
        const t = net.connect(port, '127.0.0.1');
        c.pipe(t);
        t.pipe(c);
        const end = (): void => {
          c.destroy();
          t.destroy();
        };
        for (const s of [c, t]) {
          s.on('error', end);
          s.on('close', end);
        }
      });
      servers.push(outside);
      await new Promise<void>((resolve, reject) => outside.once('error', reject).listen(sock, () => resolve()));
      const inside = spawn(wrap[0]!, [...wrap.slice(1), process.execPath, '-e', INSIDE_FORWARDER, String(port), sock], {
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      children.push(inside);
      await new Promise<void>((resolve, reject) => {
        inside.once('exit', (code) => reject(new Error(`the port forwarder into ${name} exited (${code})`)));
        inside.stdout!.once('data', () => resolve());
      });
    },
    remove,
  };
}

// `bootlet pods`: what the running agent runs, as `kubectl get pods -A` would show it, read
// from the agent's unix socket under its root directory (root only: pod specs carry secrets).
// It holds no state: the agent is the only source.
import * as http from 'node:http';
import { resolve } from 'node:path';
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { MAX_SOCKET_PATH_BYTES, podsSocketPath } from '../server/socket-path.js';
import { podRow } from '../status/print/pod-row.js';
import { formatTable } from '../status/print/table.js';
import { errorMessage } from '../util/error-message.js';
import { usageError } from './usage-error.js';

/** The agent's --root-dir default (DEFAULTS.rootDir in options.ts, not imported: this client stays small). */
export const DEFAULT_ROOT_DIR = '/var/lib/kubelet';
const TIMEOUT_MS = 10_000;

type Output = 'table' | 'wide' | 'json';

interface PodsArgs {
  output: Output;
  rootDir: string;
}

class PodsUsageError extends Error {}

export const PODS_USAGE = `Usage: bootlet pods [-o wide|json] [--root-dir DIR]

Lists the static pods of the running bootlet agent, like kubectl get pods -A. Run it as root:
it reads the agent's socket DIR/bootlet.sock, which only root may open.
  -o, --output wide|json   wide adds IP and NODE; json prints the v1 PodList
  --root-dir DIR           the agent's --root-dir (default ${DEFAULT_ROOT_DIR})`;

function parseOutput(v: string | undefined): Output {
  if (v === 'wide' || v === 'json') return v;
  throw new PodsUsageError(`invalid output format "${v ?? ''}": must be wide or json`);
}

function parseRootDir(v: string | undefined): string {
  if (v === undefined || v.trim() === '') throw new PodsUsageError('--root-dir needs a directory');
  return resolve(v);
}

function parseArgs(argv: readonly string[]): PodsArgs {
  const a: PodsArgs = { output: 'table', rootDir: DEFAULT_ROOT_DIR };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-A' || arg === '--all-namespaces') continue; // always all namespaces: accepted for habit
    if (/^--read-only-port(=|$)/.test(arg))
      throw new PodsUsageError(
        "--read-only-port is not used any more: bootlet pods reads the agent's socket under --root-dir",
      );
    const m = /^(-o|--output|--root-dir)(?:=(.*))?$/.exec(arg) ?? /^(-o)(.+)$/.exec(arg);
    if (!m) throw new PodsUsageError(`unexpected argument "${arg}"`);
    const value = m[2] ?? argv[++i];
    if (m[1] === '--root-dir') a.rootDir = parseRootDir(value);
    else a.output = parseOutput(value);
  }
  return a;
}

function unreachable(err: NodeJS.ErrnoException, path: string, rootDir: string): string {
  switch (err.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return `no bootlet agent is running with --root-dir=${rootDir}: ${path} does not exist`;
    case 'ECONNREFUSED':
      return `no bootlet agent is running with --root-dir=${rootDir}: nothing serves ${path}`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied opening ${path}: run bootlet pods as root (only root may read the agent's pods)`;
    default:
      return `cannot reach the bootlet agent on ${path}: ${err.message}`;
  }
}

/** The running agent's pods, from its socket under `rootDir`; rejects with a one-line reason. */
export function fetchPods(rootDir: string, timeoutMs = TIMEOUT_MS): Promise<PodList> {
  const socketPath = podsSocketPath(rootDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
    return Promise.reject(
      new Error(`the socket path ${socketPath} is longer than a unix socket path may be; no agent can serve it`),
    );
  }
  return new Promise((resolveList, reject) => {
    const req = http.get({ socketPath, path: '/pods', timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200)
          return reject(
            new Error(`the bootlet agent on ${socketPath} answered ${res.statusCode}: ${body.trim().split('\n')[0]}`),
          );
        try {
          resolveList(JSON.parse(body) as PodList);
        } catch {
          reject(new Error(`the answer on ${socketPath} is not JSON; is that socket a bootlet agent's?`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () =>
      req.destroy(new Error(`no answer from the bootlet agent on ${socketPath} within ${timeoutMs / 1000}s`)),
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code ? new Error(unreachable(err, socketPath, rootDir)) : err),
    );
  });
}

function renderTable(pods: readonly Pod[], wide: boolean, nowMs: number): string {
  const header = ['NAMESPACE', 'NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE', ...(wide ? ['IP', 'NODE'] : [])];
  const rows = pods.map((p) => {
    const r = podRow(p, nowMs);
    return [r.namespace, r.name, r.ready, r.status, r.restarts, r.age, ...(wide ? [r.ip, r.node] : [])];
  });
  return formatTable(header, rows);
}

/** Returns the exit code: 0, or 1 with the reason written to `err`. */
export async function runPodsCommand(
  argv: string[],
  out: (s: string) => void,
  err: (s: string) => void = (s) => process.stderr.write(s),
  now: () => number = Date.now,
): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    out(PODS_USAGE + '\n');
    return 0;
  }
  let args: PodsArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    return usageError('pods', errorMessage(e), err, PODS_USAGE);
  }
  let list: PodList;
  try {
    list = await fetchPods(args.rootDir);
  } catch (e) {
    err(`bootlet pods: ${errorMessage(e)}\n`);
    return 1;
  }
  if (args.output === 'json') {
    out(JSON.stringify(list, null, 4) + '\n');
    return 0;
  }
  const pods = list.items ?? [];
  if (pods.length === 0) {
    // As kubectl: the table is empty, which is an answer, not an error.
    err('No resources found\n');
    return 0;
  }
  out(renderTable(pods, args.output === 'wide', now()));
  return 0;
}

// `bootlet pods`: what the running agent runs, as `kubectl get pods -A` would show it, read
// from the agent's read-only port. It holds no state: the agent is the only source.
import * as http from 'node:http';
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { DEFAULT_READ_ONLY_PORT } from '../server/endpoints.js';
import { podRow } from '../status/print/pod-row.js';
import { formatTable } from '../status/print/table.js';

type Output = 'table' | 'wide' | 'json';

interface PodsArgs {
  output: Output;
  port: number;
}

class PodsUsageError extends Error {}

export const PODS_USAGE = `Usage: bootlet pods [-o wide|json] [--read-only-port N]

Lists the static pods of the running bootlet agent, like kubectl get pods -A.
  -o, --output wide|json   wide adds IP and NODE; json prints the v1 PodList
  --read-only-port N       the agent's read-only port (default ${DEFAULT_READ_ONLY_PORT})`;

function parseOutput(v: string | undefined): Output {
  if (v === 'wide' || v === 'json') return v;
  throw new PodsUsageError(`invalid output format "${v ?? ''}": must be wide or json`);
}

function parsePort(v: string | undefined): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new PodsUsageError(`invalid value "${v ?? ''}" for --read-only-port: must be a port number (1-65535)`);
  return n;
}

function parseArgs(argv: readonly string[]): PodsArgs {
  const a: PodsArgs = { output: 'table', port: DEFAULT_READ_ONLY_PORT };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^(-o|--output|--read-only-port)(?:=(.*))?$/.exec(arg) ?? /^(-o)(.+)$/.exec(arg);
    if (arg === '-A' || arg === '--all-namespaces') continue; // always all namespaces: accepted for habit
    if (!m) throw new PodsUsageError(`unexpected argument "${arg}"`);
    const value = m[2] ?? argv[++i];
    if (m[1] === '--read-only-port') a.port = parsePort(value);
    else a.output = parseOutput(value);
  }
  return a;
}

function fetchPods(port: number): Promise<PodList> {
  const url = `http://127.0.0.1:${port}/pods`;
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`the bootlet agent at ${url} answered ${res.statusCode}: ${body.trim()}`));
        try {
          resolve(JSON.parse(body) as PodList);
        } catch {
          reject(new Error(`the answer of ${url} is not JSON; is that port a bootlet agent?`));
        }
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 10s`)));
    req.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ECONNREFUSED' ? 'connection refused' : err.message;
      reject(new Error(`cannot reach the bootlet agent at http://127.0.0.1:${port}: ${why}; is it running with --read-only-port?`));
    });
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
    err(`bootlet pods: ${(e as Error).message}\n${PODS_USAGE}\n`);
    return 1;
  }
  let list: PodList;
  try {
    list = await fetchPods(args.port);
  } catch (e) {
    err(`bootlet pods: ${(e as Error).message}\n`);
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

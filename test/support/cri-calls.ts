// CRI calls the agent makes, read from its own kubelet_runtime_operations_total on the root-only
// socket, so the count is what went over the wire and not what the bench thinks it asked for.
import { getFromAgentSocket } from './agent-socket.js';

export type OperationCounts = Map<string, number>;

export async function scrapeRuntimeOperations(rootDir: string): Promise<OperationCounts> {
  const body = await getFromAgentSocket(rootDir, '/metrics');
  const counts: OperationCounts = new Map();
  for (const m of body.matchAll(/^kubelet_runtime_operations_total\{operation_type="([^"]+)"\} (\S+)$/gm))
    counts.set(m[1]!, Number(m[2]));
  return counts;
}

/** Calls per operation between two scrapes. */
export function operationsBetween(before: OperationCounts, after: OperationCounts): OperationCounts {
  const out: OperationCounts = new Map();
  for (const [op, n] of after) {
    const d = n - (before.get(op) ?? 0);
    if (d > 0) out.set(op, d);
  }
  return out;
}

/** Mean calls per operation over several samples, largest first. */
export function meanOperations(samples: OperationCounts[]): [string, number][] {
  const sum = new Map<string, number>();
  for (const s of samples) for (const [op, n] of s) sum.set(op, (sum.get(op) ?? 0) + n);
  return [...sum].map(([op, n]): [string, number] => [op, n / Math.max(1, samples.length)]).sort((a, b) => b[1] - a[1]);
}

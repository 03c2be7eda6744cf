// CRI calls the agent makes, read from its own kubelet_runtime_operations_total on the root-only
// socket, so the count is what went over the wire and not what the bench thinks it asked for.
import * as http from 'node:http';
import * as path from 'node:path';

export type OperationCounts = Map<string, number>;

export function scrapeRuntimeOperations(rootDir: string): Promise<OperationCounts> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { socketPath: path.join(rootDir, 'bootlet.sock'), path: '/metrics', host: 'localhost', timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          const counts: OperationCounts = new Map();
          for (const m of body.matchAll(/^kubelet_runtime_operations_total\{operation_type="([^"]+)"\} (\S+)$/gm))
            counts.set(m[1]!, Number(m[2]));
          resolve(counts);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('metrics scrape timed out')));
    req.on('error', reject);
  });
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

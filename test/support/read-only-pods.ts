// The pods a test agent lists on its read-only port (`/pods`, the kubelet's PodList of what it runs
// and what it refused), read over plain HTTP on loopback.
import * as http from 'node:http';
import type { PodList } from 'kubernetes-types/core/v1';

export function readOnlyPods(port: number): Promise<PodList> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/pods', agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => {
          try {
            resolve(JSON.parse(body) as PodList);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      })
      .on('error', reject);
  });
}

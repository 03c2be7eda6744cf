// The agent's root-only socket (`bootlet pods`' source, /metrics without the kubelet API): a GET
// on it, as the CLI and a scraper on the node make it.
import * as http from 'node:http';
import { podsSocketPath } from '../../src/server/socket-path.js';

/** The body of GET `urlPath` on the socket of the agent whose root directory is `rootDir`. */
export function getFromAgentSocket(rootDir: string, urlPath: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.get(
      { socketPath: podsSocketPath(rootDir), path: urlPath, host: 'localhost', timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${urlPath} timed out`)));
    req.on('error', reject);
  });
}

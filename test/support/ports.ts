// Free TCP ports on 127.0.0.1 for things a test starts (etcd, bootlet's server, probes).
import * as net from 'node:net';

const handedOut = new Set<number>();

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const addr = srv.address();
      const got = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(got));
    });
  });
}

/**
 * A port nobody listens on now, from the high range, never the same twice in one process (two
 * calls in a row would otherwise often get the same one back).
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    // Below Linux's ephemeral range (32768 and up), so the kernel does not hand the port to some
    // outgoing connection between our check and the test's listen.
    const candidate = 20000 + Math.floor(Math.random() * 12000);
    if (handedOut.has(candidate)) continue;
    try {
      const port = await listenOnce(candidate);
      handedOut.add(port);
      return port;
    } catch {
      /* in use: try another */
    }
  }
  const port = await listenOnce(0);
  handedOut.add(port);
  return port;
}

/** `n` distinct free ports. */
export async function freePorts(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await freePort());
  return out;
}

// What one client costs the fake API server in connections, from its records: the connections made
// with one client certificate, and the most of them open at one moment.
import type { ConnectionRecord, FakeApiServer } from './server.js';

/** The connections made with the client certificate `user`'s requests came with (its first request tells which). */
export function connectionsOf(api: FakeApiServer, user: string): ConnectionRecord[] {
  const cert = api.requests.find((r) => r.user === user)?.clientCert;
  return cert === undefined ? [] : api.connections.filter((c) => c.clientCert === cert);
}

/** The most connections open at one moment (each open from its handshake to its close). */
export function mostOpenAtOnce(connections: readonly ConnectionRecord[]): number {
  const edges = connections.flatMap((c) => [
    { at: c.openedAt, d: 1 },
    ...(c.closedAt === undefined ? [] : [{ at: c.closedAt, d: -1 }]),
  ]);
  // A close at the same moment as an open counts first: that connection was gone by then.
  edges.sort((a, b) => a.at - b.at || a.d - b.d);
  let open = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (open += e.d));
  return most;
}

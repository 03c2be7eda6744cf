import { FakeApiServer, type StartOptions } from './server.js';

export { ADMIN, FakeApiServer, type KubeconfigOptions, type RequestRecord, type StartOptions } from './server.js';
export type { KeyPair } from './pki.js';
export type { KObject, Json, JsonObject } from './types.js';

/** Starts a fake kube-apiserver on 127.0.0.1 (a free port unless given). Call dispose() when done. */
export async function startFakeApiServer(opts?: StartOptions): Promise<FakeApiServer> {
  return FakeApiServer.create(opts);
}

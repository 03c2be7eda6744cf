/**
 * A fake kube-apiserver for bootlet's tests, faithful enough that real kubectl 1.32 is a client of it.
 *
 *   const api = await startFakeApiServer();            // https://127.0.0.1:<free port>, own CA
 *   api.writeKubeconfig(path, 'system:node:n1', ['system:nodes']);   // what bootlet gets
 *   api.writeAdminKubeconfig(path2);                   // system:admin / system:masters, for kubectl
 *   api.objects('pods', 'kube-system'); api.object('nodes', '', 'n1'); api.requests
 *   api.stop(); api.start(); api.wipe(); api.compact(); api.setLatency(ms); api.failNext(n, 503, 2); api.hang(true); api.notReady(true)
 *   api.faultWatches('end-after-first-event' | 'cut-after-first-event' | 'huge-line')
 *   api.connections                                    // every TLS connection (ALPN, client cert); requests[].connection
 *   startFakeApiServer({ http2: false })               // an HTTP/1.1-only server (never h2); api.offerHttp2(on) for the next start()
 *   api.tokensIssued(podUid); api.issuedTokens(podUid?)  // TokenRequests answered (bound to that pod)
 *   api.serviceAccountPublicKeyPem                     // verifies the issued JWTs (ES256)
 *   api.configureTokens({ maxExpirationSeconds: 20 }); api.serviceAccountAdmission(true)
 *   await api.dispose();                               // stop + remove its temp dir
 *
 * Served: core/v1 namespaces, nodes(+status), pods(+status), events, configmaps, secrets, services(+status),
 * serviceaccounts(+token: TokenRequest); coordination.k8s.io/v1 leases;
 * events.k8s.io/v1 events (stored apart from core events); certificates.k8s.io/v1
 * certificatesigningrequests (+approval, +status) with a signer issuing from the CA once approved
 * (api.configureSigner for short lifetimes, api.autoApprove for kubeadm's auto-approval). TLS with
 * client certs (CN=user, O=groups) or bearer tokens, bootstrap tokens (api.writeBootstrapKubeconfig);
 * HTTP/2 and HTTP/1.1; system:masters may do anything, system:node:<n> gets the node rights plus
 * NodeRestriction, and the Node authorizer's graph (secrets, configmaps and tokens of the pods bound to it).
 * A fresh cluster has the `kubernetes` Service (10.96.0.1:443), and in every namespace the `default`
 * ServiceAccount and the `kube-root-ca.crt` ConfigMap (the fake's CA), kept there as the controllers do.
 * See test/e2e/fake-apiserver for what is verified against kubectl.
 */
import { FakeApiServer, type StartOptions } from './server.js';

export {
  ADMIN,
  FakeApiServer,
  type ConnectionRecord,
  type IssuedToken,
  type KubeconfigOptions,
  type RequestRecord,
  type StartOptions,
} from './server.js';
export type { RequestFacts, WatchFault } from './chaos.js';
export type { KeyPair } from './pki.js';
export {
  applyServiceAccount,
  kubeApiAccessVolume,
  SERVICE_ACCOUNT_MOUNT,
} from './core-objects/service-account-admission.js';
export type { KObject, Json, JsonObject } from './types.js';

/** Starts a fake kube-apiserver on 127.0.0.1 (a free port unless given). Call dispose() when done. */
export async function startFakeApiServer(opts?: StartOptions): Promise<FakeApiServer> {
  return FakeApiServer.create(opts);
}

// Which client identity the API side uses, decided as the kubelet's buildKubeletClientConfig does:
//  - a usable kubeconfig is used as it is (its certificate files re-read when they change);
//  - with --bootstrap-kubeconfig and no usable kubeconfig, a certificate is bootstrapped first;
//  - with rotateCertificates, the pair lives in the certificate store and is renewed before it expires
//    (a kubeconfig that embeds its certificate, as kubeadm writes it on a control-plane node, only
//    seeds the store and is replaced at once).
// Nothing here blocks the node: the API side simply starts when `ready` resolves.
import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import type { Logger } from '../../log/logger.js';
import type { CertificatePair } from './certificate-pair.js';
import {
  BOOTSTRAP_WAIT_MS,
  checkClientConfig,
  loadClientCert,
  writeKubeconfigFromBootstrapping,
} from './certificate-bootstrap.js';
import { CertificateRotation, ownClient, sharedClient, type AttemptClient } from './certificate-rotation.js';
import type { CsrClient } from './certificate-signing-request.js';
import { CertificateStore, CertificateStoreError, type PairFiles } from './certificate-store.js';
import { ClientCertificateFiles } from './client-certificate.js';
import { ApiClient } from '../client/client.js';
import { loadKubeconfig, type ClusterConnection } from '../client/kubeconfig.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';

/** The hook for serverTLSBootstrap: the same store and rotation with `kubelet-server`, the kubelet-serving signer and SANs. */
export const CLIENT_PAIR_PREFIX = 'kubelet-client';

/** How long one rotation request waits for approval (certificateWaitTimeout). */
const ROTATION_WAIT_MS = 15 * 60_000;

export interface ClientCredentialsOptions {
  kubeconfigPath: string;
  bootstrapKubeconfigPath?: string;
  /** `--cert-dir`. */
  certDir: string;
  nodeName: string;
  rotateCertificates: boolean;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** How often certificate files are looked at for outside changes; default 60 s. */
  recheckMs?: number;
  /**
   * The API side's client once it is connected (it presents the current pair): rotation requests go
   * over it rather than over a connection of their own. Bootstrap credentials always get their own.
   */
  sharedClient?: () => CsrClient | undefined;
}

export interface ClientCredentials {
  /** The connection to use right away, when no bootstrap is needed. */
  readonly now: ClusterConnection | undefined;
  /** Resolves with the connection once a client identity exists; never rejects (it retries until stopped). */
  readonly ready: Promise<ClusterConnection>;
  stop(): Promise<void>;
}

/**
 * Throws KubeconfigError (synchronously) when neither the kubeconfig nor, when it is not usable, the
 * bootstrap kubeconfig can be used: that is a start-up error. An absent API server is not.
 */
export function validateClientConfig(
  kubeconfigPath: string,
  bootstrapKubeconfigPath: string | undefined,
  now = new Date(),
): void {
  if (!bootstrapKubeconfigPath) loadKubeconfig(kubeconfigPath);
  else if (!checkClientConfig(kubeconfigPath, now).valid) loadKubeconfig(bootstrapKubeconfigPath);
}

/** The certificate-signing code is loaded only when a request is made (it is not needed on most starts). */
async function requestClientCertificate(
  client: CsrClient,
  key: KeyObject,
  signal: AbortSignal,
  nodeName: string,
  bootstrap: boolean,
  logger: Logger,
): Promise<string> {
  const csr = await import('./certificate-signing-request.js');
  const subject = csr.nodeClientSubject(nodeName);
  const spec = bootstrap
    ? {
        subject,
        signerName: csr.KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
        usages: csr.bootstrapClientUsages(key),
        name: csr.digestedName(key, subject, csr.bootstrapClientUsages(key)),
      }
    : { subject, signerName: csr.KUBE_APISERVER_CLIENT_KUBELET_SIGNER, usages: csr.rotationClientUsages(key) };
  return csr.requestCertificate(client, key, spec, {
    timeoutMs: bootstrap ? BOOTSTRAP_WAIT_MS : ROTATION_WAIT_MS,
    signal,
    logger,
  });
}

export function startClientCredentials(opts: ClientCredentialsOptions): ClientCredentials {
  const logger = opts.logger.with({ component: 'certificates' });
  const clock = opts.clock ?? systemClock;
  const abort = new AbortController();
  const filesSource = (locate: () => PairFiles | undefined): ClientCertificateFiles =>
    new ClientCertificateFiles({ locate, logger, recheckMs: opts.recheckMs, now: () => clock.now().getTime() });

  // 1. Which kubeconfig: the node's own, or a bootstrap one while the node's is not usable.
  let conn: ClusterConnection | undefined;
  let bootstrap: ClusterConnection | undefined;
  if (opts.bootstrapKubeconfigPath) {
    const check = checkClientConfig(opts.kubeconfigPath, clock.now());
    if (check.valid) conn = loadKubeconfig(opts.kubeconfigPath);
    else {
      bootstrap = loadKubeconfig(opts.bootstrapKubeconfigPath);
      logger.info('Kubeconfig not usable, bootstrapping a client certificate', {
        kubeconfig: opts.kubeconfigPath,
        reason: check.reason,
        bootstrapKubeconfig: opts.bootstrapKubeconfigPath,
        server: bootstrap.server,
      });
    }
  } else conn = loadKubeconfig(opts.kubeconfigPath);

  // 2a. No rotation: use the kubeconfig, after bootstrapping it if needed.
  if (!opts.rotateCertificates) {
    const withFiles = (c: ClusterConnection): ClusterConnection => {
      const { certFile, keyFile } = c;
      return certFile && keyFile ? { ...c, clientCertificate: filesSource(() => ({ certFile, keyFile })) } : c;
    };
    if (conn) {
      const ready = withFiles(conn);
      return { now: ready, ready: Promise.resolve(ready), stop: () => Promise.resolve() };
    }
    const bootstrapConn = bootstrap!;
    const ready = loadClientCert({
      kubeconfigPath: opts.kubeconfigPath,
      bootstrap: bootstrapConn,
      certDir: opts.certDir,
      request: (client, key, signal) => requestClientCertificate(client, key, signal, opts.nodeName, true, logger),
      signal: abort.signal,
      logger,
      clock,
      random: opts.random,
    }).then(() => withFiles(loadKubeconfig(opts.kubeconfigPath)));
    const settled = ready.then(
      () => undefined,
      (e: unknown) => {
        if (!abort.signal.aborted)
          logger.error('The bootstrapped kubeconfig cannot be used', {
            kubeconfig: opts.kubeconfigPath,
            err: errorMessage(e),
          });
      },
    );
    return {
      now: undefined,
      // Stopped or failed: the API side never starts (the reason is logged above).
      ready: ready.catch(() => new Promise<never>(() => {})),
      stop: async () => {
        abort.abort();
        await settled;
      },
    };
  }

  // 2b. Rotation: the pair lives in the store; the API client reads it from there.
  const store = new CertificateStore({
    pairNamePrefix: CLIENT_PAIR_PREFIX,
    certDir: opts.certDir,
    certFile: conn?.certFile,
    keyFile: conn?.keyFile,
    clock,
  });
  store.recover();
  if (bootstrap) writeKubeconfigFromBootstrapping(bootstrap, opts.kubeconfigPath, store.currentPath);
  let current: CertificatePair | undefined;
  try {
    current = store.current();
  } catch (e) {
    if (!(e instanceof CertificateStoreError)) throw e;
    logger.warn('Stored client certificate is not usable; requesting a new one', { err: e.message });
  }
  let force = false;
  const expired = (p: CertificatePair | undefined): boolean => !p || p.notAfter.getTime() <= clock.now().getTime();
  if (expired(current) && conn?.cert && conn.key && !conn.certFile) {
    // getCurrentCertificateOrBootstrap: the kubeconfig's own (higher-powered) pair seeds the store.
    current = store.update(conn.cert.toString(), conn.key.toString());
    force = true;
  }
  const source = filesSource(() => store.currentFiles());
  const server = (conn ?? bootstrap)!;
  // Only the pair authenticates, as the kubelet's rotating transport (AnonymousClientConfig) does.
  const apiConn: ClusterConnection = {
    ...server,
    cert: undefined,
    key: undefined,
    certFile: undefined,
    keyFile: undefined,
    token: undefined,
    tokenFile: undefined,
    clientCertificate: source,
  };
  let resolveReady: (c: ClusterConnection) => void = () => {};
  const ready = new Promise<ClusterConnection>((r) => (resolveReady = r));
  const usable = !expired(current);
  if (usable) resolveReady(apiConn);

  // The credentials a request goes out with: the current pair while valid, else bootstrap's, else the kubeconfig's.
  const fallback = (): ClusterConnection => {
    if (bootstrap) return bootstrap;
    if (opts.bootstrapKubeconfigPath) {
      try {
        return loadKubeconfig(opts.bootstrapKubeconfigPath);
      } catch (e) {
        logger.warn('Bootstrap kubeconfig not usable for a new client certificate', { err: errorMessage(e) });
      }
    }
    return conn ?? server;
  };
  const rotation = new CertificateRotation({
    store,
    subject: { commonName: `system:node:${opts.nodeName}`, organization: ['system:nodes'] },
    clientFor: (valid): AttemptClient => {
      const shared = valid && opts.sharedClient?.();
      return shared
        ? sharedClient(shared)
        : ownClient(new ApiClient(valid ? apiConn : fallback(), { userAgent: 'bootlet/certificate-rotation' }));
    },
    request: (client, key, signal) => requestClientCertificate(client, key, signal, opts.nodeName, false, logger),
    onRotated: () => {
      source.reload();
      resolveReady(apiConn);
    },
    forceRotation: force,
    logger,
    clock,
    random: opts.random,
  });
  source.onChange((pair) => rotation.pairChanged(pair));
  rotation.start(current);
  return { now: usable ? apiConn : undefined, ready, stop: () => rotation.stop() };
}

/** Where the kubelet keeps its certificates by default (`--cert-dir`). */
export function defaultCertDir(rootDir: string): string {
  return join(rootDir, 'pki');
}

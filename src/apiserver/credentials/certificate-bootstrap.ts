// TLS bootstrap as the kubelet's pkg/kubelet/certificate/bootstrap does it: when the kubeconfig
// is missing or its client certificate unusable, the bootstrap kubeconfig's credentials (usually a
// bootstrap token) file a CSR for `system:node:<name>`; the issued certificate and its key become
// `<cert-dir>/kubelet-client-<timestamp>.pem` with the `-current.pem` link, and the kubeconfig is
// written to point at that link, with the bootstrap kubeconfig's server and CA.
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { Logger } from '../../log/logger.js';
import { certificatesValidAt, parseCertificatePair } from './certificate-pair.js';
import { retryUntilDone } from './certificate-retry.js';
import { CertificateStore, CertificateStoreError } from './certificate-store.js';
import { ApiClient } from '../client/client.js';
import { KubeconfigError, loadKubeconfig, type ClusterConnection } from '../client/kubeconfig.js';
import { PRIVATE_KEY_TYPES, pemBlocks } from './pem.js';
import type { Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';

/** The private key kept between attempts and restarts until the certificate arrives (same key → same CSR name). */
export const TMP_PRIVATE_KEY_FILE = 'kubelet-client.key.tmp';

/** How long one bootstrap request waits for approval before it is filed again (requestNodeCertificate). */
export const BOOTSTRAP_WAIT_MS = 3600_000;

export type ClientConfigCheck = { valid: true } | { valid: false; reason: string };

/**
 * isClientConfigStillValid: the kubeconfig exists, loads, has a client certificate whose key
 * matches, and none of its certificates has expired. A kubeconfig with only a token is not valid
 * when a bootstrap kubeconfig is given: bootstrapping replaces it.
 */
export function checkClientConfig(kubeconfigPath: string, now: Date): ClientConfigCheck {
  if (!existsSync(kubeconfigPath)) return { valid: false, reason: 'does not exist' };
  let conn: ClusterConnection;
  try {
    conn = loadKubeconfig(kubeconfigPath);
  } catch (e) {
    return { valid: false, reason: e instanceof KubeconfigError ? e.message : String(e) };
  }
  if (!conn.cert || !conn.key) return { valid: false, reason: 'has no client certificate' };
  try {
    parseCertificatePair(conn.cert, conn.key);
  } catch (e) {
    return { valid: false, reason: `client certificate: ${errorMessage(e)}` };
  }
  const v = certificatesValidAt(conn.cert, now);
  return v.ok ? { valid: true } : { valid: false, reason: v.reason };
}

/** writeKubeconfigFromBootstrapping: server and CA of the bootstrap kubeconfig, the pair file for cert and key. */
export function writeKubeconfigFromBootstrapping(
  bootstrap: ClusterConnection,
  kubeconfigPath: string,
  pemPath: string,
): void {
  const cluster: Record<string, string> = { server: bootstrap.server };
  if (bootstrap.caFile) cluster['certificate-authority'] = bootstrap.caFile;
  else if (bootstrap.ca) cluster['certificate-authority-data'] = bootstrap.ca.toString('base64');
  // The kubelet drops tls-server-name here; keeping it is what makes such a kubeconfig work at all.
  if (bootstrap.tlsServerName) cluster['tls-server-name'] = bootstrap.tlsServerName;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default-cluster', cluster }],
    contexts: [
      { name: 'default-context', context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' } },
    ],
    'current-context': 'default-context',
    preferences: {},
    users: [{ name: 'default-auth', user: { 'client-certificate': pemPath, 'client-key': pemPath } }],
  };
  mkdirSync(dirname(kubeconfigPath), { recursive: true, mode: 0o755 });
  // Whole or not at all: a half-written kubeconfig would make the next start refuse it.
  const tmp = `${kubeconfigPath}.tmp-${process.pid}`;
  writeFileSync(tmp, stringify(doc), { mode: 0o600 });
  renameSync(tmp, kubeconfigPath);
}

/** keyutil.LoadOrGenerateKeyFile, except that an unreadable key is replaced rather than fatal. */
export function loadOrGenerateKeyFile(path: string, logger: Logger): string {
  try {
    const text = readFileSync(path, 'utf8');
    if (pemBlocks(text).some((b) => PRIVATE_KEY_TYPES.includes(b.type))) {
      createPrivateKey(text);
      return text;
    }
    logger.warn('Pending private key is not a key; making a new one', { file: path });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
      logger.warn('Pending private key is unreadable; making a new one', { file: path, err: errorMessage(e) });
  }
  const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'sec1', format: 'pem' })
    .toString();
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  writeFileSync(path, pem, { mode: 0o600 });
  return pem;
}

/** Files the request for `key` and waits; resolves with the issued certificate (PEM). */
export type BootstrapRequestFn = (client: ApiClient, key: KeyObject, signal: AbortSignal) => Promise<string>;

export interface LoadClientCertOptions {
  kubeconfigPath: string;
  bootstrap: ClusterConnection;
  certDir: string;
  request: BootstrapRequestFn;
  signal: AbortSignal;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
}

/**
 * LoadClientCert, retried until it succeeds (the kubelet exits and is restarted instead): the key of
 * an earlier pair, else the pending `kubelet-client.key.tmp`, else a new one kept there; then the
 * request, the store, and the kubeconfig. Resolves when the kubeconfig is written.
 */
export async function loadClientCert(opts: LoadClientCertOptions): Promise<void> {
  const store = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir: opts.certDir, clock: opts.clock });
  const tmpKeyPath = join(opts.certDir, TMP_PRIVATE_KEY_FILE);
  await retryUntilDone(
    async () => {
      let keyPem: string | undefined;
      try {
        keyPem = store.current()?.keyPem;
      } catch (e) {
        if (!(e instanceof CertificateStoreError)) throw e;
      }
      keyPem ??= loadOrGenerateKeyFile(tmpKeyPath, opts.logger);
      const client = new ApiClient(opts.bootstrap, { userAgent: 'bootlet/bootstrap' });
      let certPem: string;
      try {
        certPem = await opts.request(client, createPrivateKey(keyPem), opts.signal);
      } finally {
        client.close();
      }
      const pair = store.update(certPem, keyPem);
      rmSync(tmpKeyPath, { force: true });
      writeKubeconfigFromBootstrapping(opts.bootstrap, opts.kubeconfigPath, store.currentPath);
      opts.logger.info('Client certificate bootstrapped; kubeconfig written', {
        kubeconfig: opts.kubeconfigPath,
        file: store.currentPath,
        subject: pair.commonName,
        notAfter: pair.notAfter.toISOString(),
      });
    },
    { what: 'Bootstrapping the client certificate', signal: opts.signal, logger: opts.logger, random: opts.random },
  );
}

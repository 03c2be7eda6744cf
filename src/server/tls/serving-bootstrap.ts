// serverTLSBootstrap: the serving certificate comes from the API server, as the kubelet's serving
// certificate manager gets it: a `kubernetes.io/kubelet-serving` CSR for CN system:node:<name>,
// O system:nodes, with the node's host name and IP as SANs, filed with the node's own credentials;
// served as soon as it is issued (an administrator or a controller approves it), kept in
// <cert-dir>/kubelet-server-current.pem, and rotated at 70-90 % of its life like the client
// certificate. A pair that no longer names the node's addresses is replaced at once.
import { X509Certificate, type KeyObject } from 'node:crypto';
import { ApiClient } from '../../apiserver/client/client.js';
import type { CertificatePair } from '../../apiserver/credentials/certificate-pair.js';
import { CertificateRotation, ownClient, sharedClient } from '../../apiserver/credentials/certificate-rotation.js';
import type { CsrClient } from '../../apiserver/credentials/certificate-signing-request.js';
import { CertificateStore, CertificateStoreError } from '../../apiserver/credentials/certificate-store.js';
import { ipBytes, type AltNames } from '../../apiserver/credentials/der.js';
import type { ClusterConnection } from '../../apiserver/client/kubeconfig.js';
import type { Logger } from '../../log/logger.js';
import type { ServingCertificateSource, ServingPair } from './serving-certificate.js';

export const SERVING_PAIR_PREFIX = 'kubelet-server';
/** certificateWaitTimeout of the certificate manager. */
const WAIT_MS = 15 * 60_000;

export interface ServingBootstrapOptions {
  certDir: string;
  nodeName: string;
  altNames: AltNames;
  /** The node's API credentials once there are any; undefined when running without an API server. */
  connection: Promise<ClusterConnection> | undefined;
  /** The API side's client once connected: requests go over the node's one connection rather than one of their own. */
  sharedClient?: () => CsrClient | undefined;
  logger: Logger;
}

/** The SANs of a certificate, normalized for comparison. */
function sansOf(certPem: string): Set<string> {
  const out = new Set<string>();
  const text = new X509Certificate(certPem).subjectAltName ?? '';
  for (const part of text.split(/,\s*/)) {
    if (part.startsWith('DNS:')) out.add(`dns:${part.slice(4)}`);
    else if (part.startsWith('IP Address:')) {
      try {
        out.add(`ip:${ipBytes(part.slice(11).trim()).toString('hex')}`);
      } catch {
        out.add(`ip?:${part}`);
      }
    }
  }
  return out;
}

function wanted(alt: AltNames): Set<string> {
  return new Set([
    ...alt.dnsNames.map((d) => `dns:${d}`),
    ...alt.ipAddresses.map((ip) => `ip:${ipBytes(ip).toString('hex')}`),
  ]);
}

export class BootstrappedServingCertificate implements ServingCertificateSource {
  private pair: ServingPair | undefined;
  private readonly listeners: (() => void)[] = [];
  private rotation: CertificateRotation | undefined;
  private stopped = false;

  constructor(private readonly o: ServingBootstrapOptions) {
    const store = new CertificateStore({ pairNamePrefix: SERVING_PAIR_PREFIX, certDir: o.certDir });
    let current: CertificatePair | undefined;
    try {
      store.recover();
      current = store.current();
    } catch (e) {
      if (!(e instanceof CertificateStoreError)) throw e;
      o.logger.warn('Stored serving certificate is not usable; requesting a new one', { err: e.message });
    }
    if (current && current.notAfter.getTime() > Date.now()) this.pair = { cert: current.certPem, key: current.keyPem };
    if (!o.connection) {
      o.logger.warn(
        'serverTLSBootstrap needs an API server (--kubeconfig): the kubelet API is served only with a certificate already stored',
        { certDir: o.certDir },
      );
      return;
    }
    const want = wanted(o.altNames);
    void o.connection.then((conn) => {
      if (this.stopped) return;
      this.rotation = new CertificateRotation({
        store,
        subject: { commonName: `system:node:${o.nodeName}`, organization: ['system:nodes'] },
        clientFor: () => {
          const shared = o.sharedClient?.();
          return shared
            ? sharedClient(shared)
            : ownClient(new ApiClient(conn, { userAgent: 'bootlet/serving-certificate' }));
        },
        request: (client, key, signal) => this.request(client, key, signal),
        onRotated: (p) => {
          this.pair = { cert: p.certPem, key: p.keyPem };
          for (const l of this.listeners) l();
        },
        label: 'serving certificate',
        satisfies: (p) => {
          const have = sansOf(p.certPem);
          return have.size === want.size && [...want].every((w) => have.has(w));
        },
        logger: o.logger,
      });
      this.rotation.start(current);
    });
  }

  private async request(client: CsrClient, key: KeyObject, signal: AbortSignal): Promise<string> {
    const csr = await import('../../apiserver/credentials/certificate-signing-request.js');
    return csr.requestCertificate(
      client,
      key,
      {
        subject: { commonName: `system:node:${this.o.nodeName}`, organization: ['system:nodes'] },
        signerName: csr.KUBELET_SERVING_SIGNER,
        usages: csr.servingUsages(key),
        altNames: this.o.altNames,
      },
      { timeoutMs: WAIT_MS, signal, logger: this.o.logger },
    );
  }

  current(): ServingPair | undefined {
    return this.pair;
  }
  waiting(): string {
    return this.o.connection
      ? 'waiting for the kubernetes.io/kubelet-serving certificate signing request to be approved and issued (serverTLSBootstrap)'
      : 'serverTLSBootstrap is on but there is no API server to ask (no --kubeconfig) and no stored serving certificate';
  }
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }
  recheck(): void {}
  async stop(): Promise<void> {
    this.stopped = true;
    await this.rotation?.stop();
  }
}

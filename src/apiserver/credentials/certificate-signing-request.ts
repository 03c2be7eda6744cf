// Files a certificates.k8s.io/v1 CertificateSigningRequest and waits for its certificate, as
// client-go's csr.RequestCertificate and csr.WaitForCertificate do: a request that already exists
// under our deterministic name is reused when it was made with our key; then list + watch of that one
// name until it is Approved with a certificate, Denied, Failed, deleted, or the deadline passes.
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CertificateSigningRequest, CertificateSigningRequestList } from 'kubernetes-types/certificates/v1';
import type { Logger } from '../../log/logger.js';
import { describeError, isAlreadyExists, isUnavailable } from '../client/api-error.js';
import { certificatesValidAt } from './certificate-pair.js';
import type { ApiClient } from '../client/client.js';
import type { AltNames } from './der.js';
import { makeCertificateRequest, parseCertificateRequest, type RequestSubject } from './pkcs10.js';
import { errorMessage } from '../../util/error-message.js';

/** What filing a request and waiting for it takes of a client: the node's shared one once connected, else one of its own. */
export type CsrClient = Pick<ApiClient, 'create' | 'get' | 'list' | 'watch'>;

export const CSR_PATH = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
export const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';

export type KeyUsage = 'digital signature' | 'key encipherment' | 'client auth' | 'server auth';

/** The request bootlet files for a key: what the CSR says and under which name. */
export interface CertificateRequestSpec {
  subject: RequestSubject;
  signerName: string;
  usages: KeyUsage[];
  /** metadata.name; absent: generateName `csr-`, as the certificate manager files them. */
  name?: string;
  /** spec.expirationSeconds; the signer may ignore it. */
  expirationSeconds?: number;
  /** Subject alternative names (a serving certificate's DNS names and IPs). */
  altNames?: AltNames;
}

/** A request that can never succeed as made (denied, failed, deleted, incompatible): log and start over. */
export class CertificateRequestError extends Error {
  override readonly name = 'CertificateRequestError';
}

export function nodeClientSubject(nodeName: string): RequestSubject {
  return { commonName: `system:node:${nodeName}`, organization: ['system:nodes'] };
}

/** bootstrap.requestNodeCertificate: key encipherment only for RSA keys, after client auth. */
export function bootstrapClientUsages(key: KeyObject): KeyUsage[] {
  return key.asymmetricKeyType === 'rsa'
    ? ['digital signature', 'client auth', 'key encipherment']
    : ['digital signature', 'client auth'];
}

/** The kubelet's serving certificate manager: key encipherment only for RSA keys. */
export function servingUsages(key: KeyObject): KeyUsage[] {
  return key.asymmetricKeyType === 'rsa'
    ? ['digital signature', 'key encipherment', 'server auth']
    : ['digital signature', 'server auth'];
}

/** certificate.DefaultKubeletClientGetUsages (rotation). */
export function rotationClientUsages(key: KeyObject): KeyUsage[] {
  return key.asymmetricKeyType === 'rsa'
    ? ['digital signature', 'key encipherment', 'client auth']
    : ['digital signature', 'client auth'];
}

/**
 * `node-csr-<digest>` as the kubelet's bootstrap names its request: SHA-512/256 over the public key,
 * CN, O and usages, each base64url-encoded and ended by `|` (not in that alphabet), so the same key
 * on the same node files the same name and a restart finds its earlier request.
 */
export function digestedName(key: KeyObject, subject: RequestSubject, usages: readonly string[]): string {
  const hash = createHash('sha512-256');
  const write = (data: Buffer): void => {
    hash.update(data.toString('base64url'));
    hash.update('|');
  };
  write((key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' }));
  write(Buffer.from(subject.commonName));
  for (const o of subject.organization) write(Buffer.from(o));
  for (const u of usages) write(Buffer.from(u));
  return `node-csr-${hash.digest().toString('base64url')}`;
}

/** Creates the request (or adopts ours under the same name). Returns its name and UID. */
export async function fileCertificateRequest(
  client: CsrClient,
  privateKey: KeyObject,
  spec: CertificateRequestSpec,
): Promise<{ name: string; uid: string }> {
  const request = makeCertificateRequest(privateKey, spec.subject, spec.altNames);
  const body: CertificateSigningRequest = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: spec.name ? { name: spec.name } : { generateName: 'csr-' },
    spec: {
      request: Buffer.from(request).toString('base64'),
      signerName: spec.signerName,
      usages: spec.usages,
      ...(spec.expirationSeconds !== undefined ? { expirationSeconds: spec.expirationSeconds } : {}),
    },
  };
  try {
    const created = await client.create<CertificateSigningRequest>(CSR_PATH, body);
    return { name: created.metadata?.name ?? '', uid: created.metadata?.uid ?? '' };
  } catch (e) {
    if (!spec.name || !isAlreadyExists(e)) throw e;
  }
  const existing = await client.get<CertificateSigningRequest>(`${CSR_PATH}/${spec.name}`);
  ensureCompatible(existing, spec, privateKey);
  return { name: spec.name, uid: existing.metadata?.uid ?? '' };
}

/** csr.ensureCompatible: same subject and signer, signed by our key, no expired certificate. */
function ensureCompatible(
  existing: CertificateSigningRequest,
  spec: CertificateRequestSpec,
  privateKey: KeyObject,
): void {
  const name = existing.metadata?.name ?? '';
  let parsed;
  try {
    parsed = parseCertificateRequest(Buffer.from(existing.spec.request, 'base64'));
  } catch (e) {
    throw new CertificateRequestError(`existing csr ${name} is not compatible: unable to parse it: ${errorMessage(e)}`);
  }
  const same =
    parsed.subject.commonName === spec.subject.commonName &&
    parsed.subject.organization.join('\n') === spec.subject.organization.join('\n');
  if (!same) throw new CertificateRequestError(`existing csr ${name} is not compatible: subjects differ`);
  if (existing.spec.signerName && existing.spec.signerName !== spec.signerName)
    throw new CertificateRequestError(
      `existing csr ${name} is not compatible: signerName ${existing.spec.signerName}, want ${spec.signerName}`,
    );
  const ours = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  if (!parsed.publicKey.equals(ours) || !parsed.signatureValid)
    throw new CertificateRequestError(`existing csr ${name} is not compatible: not signed with this node's key`);
  const issued = existing.status?.certificate;
  if (issued) {
    const valid = certificatesValidAt(Buffer.from(issued, 'base64'), new Date());
    if (!valid.ok) throw new CertificateRequestError(`existing csr ${name} is not compatible: ${valid.reason}`);
  }
}

export interface WaitOptions {
  /** Give up (CertificateRequestError) after this long; the caller files a new request. */
  timeoutMs: number;
  signal: AbortSignal;
  logger: Logger;
  /** Pause after a failed list or watch, before listing again; default ~2 s. */
  retryMs?: () => number;
}

/** What the request says now: the issued PEM, nothing yet, or why it never will. */
function verdict(csr: CertificateSigningRequest, uid: string): string | undefined {
  const name = csr.metadata?.name ?? '';
  if (uid && csr.metadata?.uid && csr.metadata.uid !== uid)
    throw new CertificateRequestError(`csr ${name} changed UIDs`);
  let approved = false;
  for (const c of csr.status?.conditions ?? []) {
    if (c.type === 'Denied')
      throw new CertificateRequestError(
        `certificate signing request ${name} is denied, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`,
      );
    if (c.type === 'Failed')
      throw new CertificateRequestError(
        `certificate signing request ${name} failed, reason: ${c.reason ?? ''}, message: ${c.message ?? ''}`,
      );
    if (c.type === 'Approved') approved = true;
  }
  if (approved && csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
  return undefined;
}

/** Resolves with the issued certificate (PEM). Rejects with CertificateRequestError, or AbortError when stopped. */
export async function waitForCertificate(
  client: CsrClient,
  name: string,
  uid: string,
  opts: WaitOptions,
): Promise<string> {
  const deadline = Date.now() + opts.timeoutMs;
  const fieldSelector = `metadata.name=${name}`;
  const retry = opts.retryMs ?? (() => Math.round(2000 * (0.8 + 0.4 * Math.random())));
  let saidApproved = false;
  const check = (csr: CertificateSigningRequest): string | undefined => {
    const pem = verdict(csr, uid);
    if (!pem && !saidApproved && csr.status?.conditions?.some((c) => c.type === 'Approved')) {
      saidApproved = true;
      opts.logger.info('Certificate signing request approved, waiting for the certificate', { csr: name });
    }
    return pem;
  };
  while (Date.now() < deadline) {
    opts.signal.throwIfAborted();
    try {
      const list = await client.list<CertificateSigningRequestList>(CSR_PATH, { fieldSelector });
      const csr = list.items[0];
      if (!csr) throw new CertificateRequestError(`csr ${name} was deleted`);
      const found = check(csr);
      if (found) return found;
      let issued: string | undefined;
      let failure: Error | undefined;
      const timeoutSeconds = Math.max(1, Math.min(300, Math.ceil((deadline - Date.now()) / 1000)));
      const watch = client.watch<CertificateSigningRequest>(
        CSR_PATH,
        { fieldSelector, resourceVersion: list.metadata?.resourceVersion, timeoutSeconds, allowWatchBookmarks: true },
        (ev) => {
          if (issued || failure || ev.type === 'BOOKMARK') return;
          try {
            if (ev.type === 'DELETED') throw new CertificateRequestError(`csr ${name} was deleted`);
            issued = check(ev.object);
          } catch (e) {
            failure = e as Error;
          }
          if (issued || failure) watch.stop();
        },
      );
      const onAbort = (): void => watch.stop();
      opts.signal.addEventListener('abort', onAbort, { once: true });
      try {
        await watch.done;
      } finally {
        opts.signal.removeEventListener('abort', onAbort);
      }
      if (failure) throw failure;
      if (issued) return issued;
      // The watch ended (its timeout, or the server closed it): list again.
    } catch (e) {
      if (e instanceof CertificateRequestError) throw e;
      opts.signal.throwIfAborted();
      opts.logger.v(2).info('Waiting for the certificate signing request', {
        csr: name,
        err: describeError(e),
        serverAway: isUnavailable(e),
      });
      await sleep(retry(), undefined, { signal: opts.signal });
    }
  }
  throw new CertificateRequestError(`timed out waiting for csr ${name} to be signed`);
}

/** Files the request and waits for its certificate (PEM): one attempt, as rotateCerts/LoadClientCert make it. */
export async function requestCertificate(
  client: CsrClient,
  privateKey: KeyObject,
  spec: CertificateRequestSpec,
  wait: WaitOptions,
): Promise<string> {
  const { name, uid } = await fileCertificateRequest(client, privateKey, spec);
  wait.logger.info('Certificate signing request filed, waiting for approval', {
    csr: name,
    signerName: spec.signerName,
    subject: spec.subject.commonName,
  });
  const pem = await waitForCertificate(client, name, uid, wait);
  wait.logger.info('Certificate signing request issued', { csr: name });
  return pem;
}

// The kube-controller-manager's csrsigning controller for the signers a node uses: an Approved
// request that is not Failed gets `status.certificate`, issued from the fake's CA with the
// kubelet-client checks first (a request that fails them is marked Failed, SignerValidationFailure).
// Lifetime as the real signer: the cluster signing duration, or spec.expirationSeconds when shorter
// (never under a floor), notBefore backdated, notAfter capped at the CA's. All three are settable so
// that a test can watch a short-lived certificate rotate.
import 'reflect-metadata';
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
import {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  X509Certificate,
  X509CertificateGenerator,
} from '@peculiar/x509';
import type { ObjectStore, StoreEvent } from '../store.js';
import { arr, isObject, meta, num, obj, str, type Json, type JsonObject, type KObject } from '../types.js';
import { parseRequest, type ParsedRequest } from './csr-request.js';
import { CSR_STORAGE_KEY } from './csr-strategy.js';

export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

export interface SignerSettings {
  /** --cluster-signing-duration: the longest lifetime; default 1 year. */
  ttlSeconds: number;
  /** notBefore is this far in the past; default 5 minutes. */
  backdateSeconds: number;
  /** A requested expirationSeconds below this is raised to it; default 10 minutes. */
  minSeconds: number;
  /** Lifetimes under this are not backdated at the end; default 8 hours. */
  shortSeconds: number;
}

export const DEFAULT_SIGNER: SignerSettings = {
  ttlSeconds: 365 * 24 * 3600,
  backdateSeconds: 300,
  minSeconds: 600,
  shortSeconds: 8 * 3600,
};

const USAGE_FLAGS: Record<string, KeyUsageFlags> = {
  'digital signature': KeyUsageFlags.digitalSignature,
  signing: KeyUsageFlags.digitalSignature,
  'key encipherment': KeyUsageFlags.keyEncipherment,
  'content commitment': KeyUsageFlags.nonRepudiation,
  'key agreement': KeyUsageFlags.keyAgreement,
  'data encipherment': KeyUsageFlags.dataEncipherment,
  'cert sign': KeyUsageFlags.keyCertSign,
  'crl sign': KeyUsageFlags.cRLSign,
};
const EXT_USAGES: Record<string, string> = { 'client auth': '1.3.6.1.5.5.7.3.2', 'server auth': '1.3.6.1.5.5.7.3.1' };

function condition(o: KObject, type: string): boolean {
  return arr(obj(o.status).conditions).some((c) => isObject(c) && str(c.type) === type && str(c.status) === 'True');
}

/** ValidateKubeletClientCSR. */
function validateKubeletClient(req: ParsedRequest, usages: string[]): string | undefined {
  if (req.organization.length !== 1 || req.organization[0] !== 'system:nodes')
    return 'subject organization is not system:nodes';
  if (req.hasSANs) return 'subjectAltNames are not allowed';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  const set = [...new Set(usages)].sort().join(',');
  if (set !== 'client auth,digital signature,key encipherment' && set !== 'client auth,digital signature')
    return 'usages did not match [client auth digital signature key encipherment]';
  return undefined;
}

/** ValidateKubeletServingCSR: a node's serving certificate, with DNS or IP SANs only. */
function validateKubeletServing(req: ParsedRequest, usages: string[]): string | undefined {
  if (req.organization.length !== 1 || req.organization[0] !== 'system:nodes')
    return 'subject organization is not system:nodes';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  const san = req.csr.getExtension('2.5.29.17');
  if (!san) return 'DNS or IP subjectAltName is required';
  const set = [...new Set(usages)].sort().join(',');
  if (set !== 'digital signature,key encipherment,server auth' && set !== 'digital signature,server auth')
    return 'usages did not match [digital signature key encipherment server auth]';
  return undefined;
}

function validateApiServerClient(usages: string[]): string | undefined {
  for (const u of usages)
    if (!['digital signature', 'key encipherment', 'client auth'].includes(u))
      return `invalid usage for client certificate: ${u}`;
  return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
}

export class CsrSigner {
  settings: SignerSettings = { ...DEFAULT_SIGNER };
  private readonly inFlight = new Set<string>();
  private readonly unsubscribe: () => void;
  private caKey: Promise<webcrypto.CryptoKey> | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly ca: { certPem: string; keyPem: string },
  ) {
    this.unsubscribe = store.subscribe((ev) => this.onEvent(ev));
  }

  close(): void {
    this.unsubscribe();
  }

  private onEvent(ev: StoreEvent): void {
    if (ev.storageKey !== CSR_STORAGE_KEY || ev.type === 'DELETED') return;
    const o = ev.object;
    const signer = str(obj(o.spec).signerName);
    if (
      signer !== KUBELET_CLIENT_SIGNER &&
      signer !== KUBE_APISERVER_CLIENT_SIGNER &&
      signer !== KUBELET_SERVING_SIGNER
    )
      return;
    if (!condition(o, 'Approved') || condition(o, 'Failed') || str(obj(o.status).certificate)) return;
    const key = `${meta(o).name}/${meta(o).uid}`;
    if (this.inFlight.has(key)) return;
    this.inFlight.add(key);
    // Never inside the store's own notification: watchers must see this change before ours.
    setImmediate(() => {
      void this.handle(o)
        .catch((e: unknown) => this.fail(o, 'SignerError', (e as Error).message))
        .finally(() => this.inFlight.delete(key));
    });
  }

  private async handle(o: KObject): Promise<void> {
    const spec = obj(o.spec);
    const usages = arr(spec.usages).map((u) => str(u));
    const req = parseRequest(str(spec.request));
    const signer = str(spec.signerName);
    const why =
      signer === KUBELET_CLIENT_SIGNER
        ? validateKubeletClient(req, usages)
        : signer === KUBELET_SERVING_SIGNER
          ? validateKubeletServing(req, usages)
          : validateApiServerClient(usages);
    if (why) return this.fail(o, 'SignerValidationFailure', why);
    const pem = await this.issue(req, usages, num(spec.expirationSeconds));
    const current = this.store.get(CSR_STORAGE_KEY, '', meta(o).name);
    if (!current || meta(current).uid !== meta(o).uid || str(obj(current.status).certificate)) return;
    current.status = { ...obj(current.status), certificate: Buffer.from(pem).toString('base64') };
    this.store.put(CSR_STORAGE_KEY, current, 'MODIFIED');
  }

  private fail(o: KObject, reason: string, message: string): void {
    const current = this.store.get(CSR_STORAGE_KEY, '', meta(o).name);
    if (!current || meta(current).uid !== meta(o).uid) return;
    const status = obj(current.status);
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const failed: JsonObject = {
      type: 'Failed',
      status: 'True',
      reason,
      message,
      lastUpdateTime: at,
      lastTransitionTime: at,
    };
    current.status = { ...status, conditions: [...arr(status.conditions), failed] as Json[] };
    this.store.put(CSR_STORAGE_KEY, current, 'MODIFIED');
  }

  /** The lifetime for a request, as signer.duration() picks it. */
  duration(expirationSeconds: number | undefined): number {
    const s = this.settings;
    if (expirationSeconds === undefined) return s.ttlSeconds;
    return Math.max(s.minSeconds, Math.min(s.ttlSeconds, expirationSeconds));
  }

  private async issue(req: ParsedRequest, usages: string[], expirationSeconds: number | undefined): Promise<string> {
    const ca = new X509Certificate(this.ca.certPem);
    this.caKey ??= webcrypto.subtle.importKey(
      'pkcs8',
      createPrivateKey(this.ca.keyPem).export({ type: 'pkcs8', format: 'der' }),
      { name: 'ECDSA', namedCurve: 'P-256' },
      false,
      ['sign'],
    );
    const ttl = this.duration(expirationSeconds) * 1000;
    const now = Date.now();
    const backdate = this.settings.backdateSeconds * 1000;
    const notBefore = new Date(now - backdate);
    let notAfter = new Date(ttl < this.settings.shortSeconds * 1000 ? now + ttl : now + ttl - backdate);
    if (notAfter > ca.notAfter) notAfter = ca.notAfter;
    let flags = 0;
    for (const u of usages) flags |= USAGE_FLAGS[u] ?? 0;
    const ext = usages.map((u) => EXT_USAGES[u]).filter((x): x is string => !!x);
    const serial = randomBytes(16);
    serial[0] &= 0x7f;
    const cert = await X509CertificateGenerator.create({
      serialNumber: serial.toString('hex'),
      subject: req.csr.subjectName,
      issuer: ca.subjectName,
      notBefore,
      notAfter,
      publicKey: req.csr.publicKey,
      signingKey: await this.caKey,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } as webcrypto.EcdsaParams,
      extensions: [
        new KeyUsagesExtension(flags, true),
        ...(ext.length ? [new ExtendedKeyUsageExtension(ext, false)] : []),
        new BasicConstraintsExtension(false, undefined, true),
        await AuthorityKeyIdentifierExtension.create(ca, false),
        // The requested SANs, as the kubelet-serving signer copies them.
        ...req.csr.extensions.filter((e) => e.type === '2.5.29.17'),
      ],
    });
    return cert.toString('pem') + '\n';
  }
}

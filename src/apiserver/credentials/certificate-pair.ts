// A client certificate with its key, read and checked as tls.X509KeyPair would: the first
// certificate is the leaf, the key must be the leaf's. Only node:crypto, no ASN.1 of our own.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { pemBlocks, pemOf, PRIVATE_KEY_TYPES, encodePem } from './pem.js';
import { errorMessage } from '../../util/error-message.js';
import { subjectFields } from '../../util/x509-subject.js';

export interface CertificatePair {
  /** The CERTIFICATE blocks, leaf first. */
  certPem: string;
  /** The private key block. */
  keyPem: string;
  privateKey: KeyObject;
  commonName: string;
  organization: string[];
  notBefore: Date;
  notAfter: Date;
}

/** Throws an Error saying what is wrong with the pair (no certificate, no key, key not the leaf's...). */
export function parseCertificatePair(certText: string | Buffer, keyText: string | Buffer): CertificatePair {
  const certPem = pemOf(certText, 'CERTIFICATE');
  if (!certPem) throw new Error('no CERTIFICATE block');
  const keyBlock = pemBlocks(keyText).find((b) => PRIVATE_KEY_TYPES.includes(b.type));
  if (!keyBlock) throw new Error('no private key block');
  const keyPem = encodePem(keyBlock.type, keyBlock.der);
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certPem);
  } catch (e) {
    throw new Error(`certificate does not parse: ${errorMessage(e)}`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(keyPem);
  } catch (e) {
    throw new Error(`private key does not parse: ${errorMessage(e)}`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new Error('private key does not match the certificate');
  const subject = subjectFields(leaf.subject);
  return {
    certPem,
    keyPem,
    privateKey,
    commonName: subject.CN?.[0] ?? '',
    organization: subject.O ?? [],
    notBefore: new Date(Date.parse(leaf.validFrom)),
    notAfter: new Date(Date.parse(leaf.validTo)),
  };
}

/** Every certificate in the text, leaf first; none may have expired at `now` (isClientConfigStillValid). */
export function certificatesValidAt(
  certText: string | Buffer,
  now: Date,
): { ok: true } | { ok: false; reason: string } {
  const blocks = pemBlocks(certText).filter((b) => b.type === 'CERTIFICATE');
  if (blocks.length === 0) return { ok: false, reason: 'no client certificate' };
  for (const b of blocks) {
    let notAfter: number;
    try {
      notAfter = Date.parse(new X509Certificate(b.der).validTo);
    } catch (e) {
      return { ok: false, reason: `client certificate does not parse: ${errorMessage(e)}` };
    }
    if (now.getTime() > notAfter)
      return { ok: false, reason: `client certificate expired at ${new Date(notAfter).toISOString()}` };
  }
  return { ok: true };
}

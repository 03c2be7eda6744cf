// PKCS#10 certificate requests (RFC 2986) for the one shape a kubelet files: a subject of O and CN,
// no extensions, signed with the node's key. node:crypto makes the key, its SubjectPublicKeyInfo and
// the signature; only the DER around them is ours (a library for this was measured at 0.55-0.63 MB
// bundled and +6-13 MiB RSS when used; see src/apiserver/README.md). Loaded only when a request is made.
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import {
  bitString,
  extension,
  name,
  NULL,
  objectIdentifier,
  OID_CN,
  OID_O,
  OID_SUBJECT_ALT_NAME,
  sequence,
  set,
  smallInteger,
  subjectAltNames,
  tlv,
  type AltNames,
} from './der.js';
import { encodePem, pemBlocks } from './pem.js';

export interface RequestSubject {
  commonName: string;
  organization: string[];
}

const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

/** Signature algorithms as Go's x509 picks them for a key (certutil.MakeCSR). */
export interface SignatureAlgorithm {
  oid: string;
  hash: string | null;
  /** RSA algorithm identifiers carry an explicit NULL, ECDSA ones nothing. */
  nullParams: boolean;
}

export function signatureAlgorithmFor(key: KeyObject): SignatureAlgorithm {
  const d = key.asymmetricKeyDetails ?? {};
  switch (key.asymmetricKeyType) {
    case 'ec':
      if (d.namedCurve === 'prime256v1') return { oid: '1.2.840.10045.4.3.2', hash: 'sha256', nullParams: false };
      if (d.namedCurve === 'secp384r1') return { oid: '1.2.840.10045.4.3.3', hash: 'sha384', nullParams: false };
      if (d.namedCurve === 'secp521r1') return { oid: '1.2.840.10045.4.3.4', hash: 'sha512', nullParams: false };
      break;
    case 'rsa': {
      const bits = d.modulusLength ?? 2048;
      if (bits >= 4096) return { oid: '1.2.840.113549.1.1.13', hash: 'sha512', nullParams: true };
      if (bits >= 3072) return { oid: '1.2.840.113549.1.1.12', hash: 'sha384', nullParams: true };
      return { oid: '1.2.840.113549.1.1.11', hash: 'sha256', nullParams: true };
    }
    case 'ed25519':
      return { oid: '1.3.101.112', hash: null, nullParams: false };
    default:
      break;
  }
  throw new Error(
    `private key of type ${key.asymmetricKeyType ?? 'unknown'}${d.namedCurve ? ` (${d.namedCurve})` : ''} cannot sign a certificate request`,
  );
}

/** The AlgorithmIdentifier of `alg` (RSA ones carry an explicit NULL). */
export function algorithmIdentifier(alg: SignatureAlgorithm): Buffer {
  return sequence(objectIdentifier(alg.oid), ...(alg.nullParams ? [NULL] : []));
}

/**
 * A PEM `CERTIFICATE REQUEST` for `subject`, signed with `privateKey`. With `altNames` (a serving
 * certificate), the SANs go in an extensionRequest attribute, as x509.CreateCertificateRequest writes them.
 */
export function makeCertificateRequest(privateKey: KeyObject, subject: RequestSubject, altNames?: AltNames): string {
  const alg = signatureAlgorithmFor(privateKey);
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const hasSANs = altNames !== undefined && altNames.dnsNames.length + altNames.ipAddresses.length > 0;
  const attributes = hasSANs
    ? sequence(
        objectIdentifier(OID_EXTENSION_REQUEST),
        set(sequence(extension(OID_SUBJECT_ALT_NAME, false, subjectAltNames(altNames)))),
      )
    : Buffer.alloc(0);
  // version 0, subject, key, and the [0] attributes set (empty without SANs), as Go writes it.
  const info = sequence(smallInteger(0), name(subject), spki, tlv(0xa0, attributes));
  const signature = sign(alg.hash, info, privateKey);
  const der = sequence(info, algorithmIdentifier(alg), bitString(signature));
  return encodePem('CERTIFICATE REQUEST', der);
}

// ---- DER reading (just enough to check a request we find on the server) ----

interface Element {
  tag: number;
  /** The whole element, header included. */
  raw: Buffer;
  body: Buffer;
}

function readElement(buf: Buffer, offset: number): Element {
  const tag = buf[offset];
  let len = buf[offset + 1];
  let header = 2;
  if (tag === undefined || len === undefined) throw new Error('truncated DER');
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error('unsupported DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (buf[offset + 2 + i] ?? 0);
    header += n;
  }
  const end = offset + header + len;
  if (end > buf.length) throw new Error('truncated DER');
  return { tag, raw: buf.subarray(offset, end), body: buf.subarray(offset + header, end) };
}

function children(body: Buffer): Element[] {
  const out: Element[] = [];
  for (let off = 0; off < body.length;) {
    const e = readElement(body, off);
    out.push(e);
    off += e.raw.length;
  }
  return out;
}

function oidText(body: Buffer): string {
  const parts = [Math.floor(body[0] / 40), body[0] % 40];
  let v = 0;
  for (const b of body.subarray(1)) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

export interface ParsedCertificateRequest {
  subject: RequestSubject;
  /** DER SubjectPublicKeyInfo. */
  publicKey: Buffer;
  /** Whether the request is signed by the key it carries. */
  signatureValid: boolean;
}

export function parseCertificateRequest(pem: string | Buffer): ParsedCertificateRequest {
  const block = pemBlocks(pem).find((b) => b.type === 'CERTIFICATE REQUEST');
  if (!block) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const [info, algorithm, signature] = children(readElement(block.der, 0).body);
  if (!info || !algorithm || !signature) throw new Error('not a certificate request');
  const [, subjectEl, spkiEl] = children(info.body);
  if (!subjectEl || !spkiEl) throw new Error('not a certificate request');
  const subject: RequestSubject = { commonName: '', organization: [] };
  for (const rdn of children(subjectEl.body))
    for (const atv of children(rdn.body)) {
      const [oid, value] = children(atv.body);
      const type = oid ? oidText(oid.body) : '';
      if (type === OID_CN && value) subject.commonName = value.body.toString('utf8');
      if (type === OID_O && value) subject.organization.push(value.body.toString('utf8'));
    }
  const algOid = oidText(children(algorithm.body)[0]?.body ?? Buffer.alloc(0));
  const hash = {
    '1.2.840.10045.4.3.2': 'sha256',
    '1.2.840.10045.4.3.3': 'sha384',
    '1.2.840.10045.4.3.4': 'sha512',
    '1.2.840.113549.1.1.11': 'sha256',
    '1.2.840.113549.1.1.12': 'sha384',
    '1.2.840.113549.1.1.13': 'sha512',
    '1.3.101.112': null,
  }[algOid];
  let signatureValid = false;
  if (hash !== undefined) {
    try {
      signatureValid = verify(
        hash,
        info.raw,
        createPublicKey({ key: spkiEl.raw, format: 'der', type: 'spki' }),
        signature.body.subarray(1),
      );
    } catch {
      signatureValid = false;
    }
  }
  return { subject, publicKey: Buffer.from(spkiEl.raw), signatureValid };
}

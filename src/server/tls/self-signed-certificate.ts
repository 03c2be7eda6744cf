// The kubelet's serving certificate when none is configured (certutil.GenerateSelfSignedCertKey):
// a one-year RSA 2048 CA `<host>-ca@<unix time>` and, signed by it, a certificate `<host>@<unix time>`
// for server auth, valid from an hour ago; the file holds the certificate then the CA. The SANs
// are the host (a DNS name, or an IP when the host is one) and the alternate addresses. The DER
// is ours (src/apiserver/der.ts); keys and signatures are node:crypto's.
import { createHash, generateKeyPair, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import {
  bitString,
  explicit,
  objectIdentifier,
  extension,
  name,
  octetString,
  sequence,
  smallInteger,
  subjectAltNames,
  time,
  TRUE,
  tlv,
  type AltNames,
} from '../../apiserver/credentials/der.js';
import { encodePem } from '../../apiserver/credentials/pem.js';
import { algorithmIdentifier, signatureAlgorithmFor } from '../../apiserver/credentials/pkcs10.js';

const OID_KEY_USAGE = '2.5.29.15';
const OID_EXT_KEY_USAGE = '2.5.29.37';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';
const OID_SUBJECT_KEY_ID = '2.5.29.14';
const OID_AUTHORITY_KEY_ID = '2.5.29.35';
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

const HOUR_MS = 3600_000;
const YEAR_MS = 365 * 24 * HOUR_MS;

/** KeyUsage as Go encodes it: digitalSignature (bit 0), keyEncipherment (2), keyCertSign (5), trailing zero bits unused. */
function keyUsage(certSign: boolean): Buffer {
  return certSign ? tlv(0x03, Buffer.from([2, 0xa4])) : tlv(0x03, Buffer.from([5, 0xa0]));
}

/** The subject key id Go computes: SHA-1 of the public key's bit string. */
function subjectKeyId(publicKey: KeyObject): Buffer {
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  // SubjectPublicKeyInfo ::= SEQUENCE { algorithm, subjectPublicKey BIT STRING }: the key is its last element.
  const bits = lastElementBody(spki);
  return createHash('sha1').update(bits.subarray(1)).digest();
}

function lastElementBody(der: Buffer): Buffer {
  const header = (off: number): { len: number; head: number } => {
    const first = der[off + 1] ?? 0;
    if (!(first & 0x80)) return { len: first, head: 2 };
    const n = first & 0x7f;
    let len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (der[off + 2 + i] ?? 0);
    return { len, head: 2 + n };
  };
  const outer = header(0);
  let off = outer.head;
  let last = { start: 0, end: 0 };
  while (off < outer.head + outer.len) {
    const h = header(off);
    last = { start: off + h.head, end: off + h.head + h.len };
    off = last.end;
  }
  return der.subarray(last.start, last.end);
}

interface CertificateTemplate {
  serial: number;
  subject: string;
  issuer: string;
  notBefore: Date;
  notAfter: Date;
  publicKey: KeyObject;
  extensions: Buffer[];
}

function certificate(t: CertificateTemplate, signer: KeyObject): string {
  const alg = algorithmIdentifier(signatureAlgorithmFor(signer));
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    smallInteger(t.serial),
    alg,
    name({ commonName: t.issuer, organization: [] }),
    sequence(time(t.notBefore), time(t.notAfter)),
    name({ commonName: t.subject, organization: [] }),
    t.publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...t.extensions)),
  );
  const signature = sign(signatureAlgorithmFor(signer).hash, tbs, signer);
  return encodePem('CERTIFICATE', sequence(tbs, alg, bitString(signature)));
}

const rsaKeyPair = promisify(generateKeyPair);

export interface SelfSignedPair {
  /** The certificate, then the CA that signed it. */
  certPem: string;
  /** `RSA PRIVATE KEY` (PKCS#1), as keyutil writes it. */
  keyPem: string;
}

/** host: a DNS name or an IP; alternates are added as SANs. */
export async function generateSelfSignedCertKey(
  host: string,
  alt: AltNames,
  now = new Date(),
): Promise<SelfSignedPair> {
  const validFrom = new Date(Math.floor((now.getTime() - HOUR_MS) / 1000) * 1000);
  const validTo = new Date(validFrom.getTime() + YEAR_MS);
  const unix = Math.floor(now.getTime() / 1000);
  const [ca, leaf] = await Promise.all([
    rsaKeyPair('rsa', { modulusLength: 2048 }),
    rsaKeyPair('rsa', { modulusLength: 2048 }),
  ]);
  const caName = `${host}-ca@${unix}`;
  const caKeyId = subjectKeyId(ca.publicKey);
  const caPem = certificate(
    {
      serial: 1,
      subject: caName,
      issuer: caName,
      notBefore: validFrom,
      notAfter: validTo,
      publicKey: ca.publicKey,
      extensions: [
        extension(OID_KEY_USAGE, true, keyUsage(true)),
        extension(OID_BASIC_CONSTRAINTS, true, sequence(TRUE)),
        extension(OID_SUBJECT_KEY_ID, false, octetString(caKeyId)),
      ],
    },
    ca.privateKey,
  );
  const names: AltNames =
    isIP(host) !== 0
      ? { dnsNames: alt.dnsNames, ipAddresses: [host, ...alt.ipAddresses] }
      : { dnsNames: [host, ...alt.dnsNames], ipAddresses: alt.ipAddresses };
  const leafPem = certificate(
    {
      serial: 2,
      subject: `${host}@${unix}`,
      issuer: caName,
      notBefore: validFrom,
      notAfter: validTo,
      publicKey: leaf.publicKey,
      extensions: [
        extension(OID_KEY_USAGE, true, keyUsage(false)),
        extension(OID_EXT_KEY_USAGE, false, sequence(objectIdentifier(OID_SERVER_AUTH))),
        extension(OID_BASIC_CONSTRAINTS, true, sequence()),
        extension(OID_AUTHORITY_KEY_ID, false, sequence(tlv(0x80, caKeyId))),
        extension('2.5.29.17', false, subjectAltNames(names)),
      ],
    },
    ca.privateKey,
  );
  return { certPem: leafPem + caPem, keyPem: leaf.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString() };
}

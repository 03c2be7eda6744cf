import 'reflect-metadata';
import { createPublicKey, verify } from 'node:crypto';
import { Pkcs10CertificateRequest } from '@peculiar/x509';

/** A certificate request as the server reads spec.request: parsed by an ASN.1 library, signature checked. */
export interface ParsedRequest {
  csr: Pkcs10CertificateRequest;
  commonName: string;
  organization: string[];
  hasSANs: boolean;
}

const HASH_OF_SIGNATURE: Record<string, string | null> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.3.101.112': null,
};

/** certificates.ParseCSR + CheckSignature; throws with the message the server puts in its 422. */
export function parseRequest(base64: string): ParsedRequest {
  const pem = Buffer.from(base64, 'base64').toString('utf8');
  const m = /-----BEGIN ([A-Z ]+)-----/.exec(pem);
  if (!m || m[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let csr: Pkcs10CertificateRequest;
  try {
    csr = new Pkcs10CertificateRequest(pem);
  } catch (e) {
    throw new Error(`asn1: ${(e as Error).message}`);
  }
  const { info, oid, signature } = outerParts(new Uint8Array(csr.rawData));
  const hash = HASH_OF_SIGNATURE[oid];
  if (hash === undefined) throw new Error(`x509: cannot verify signature: algorithm unimplemented (${oid})`);
  const key = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
  if (!verify(hash, info, key, signature)) throw new Error('x509: signature verification failure');
  const san = csr.getExtension('2.5.29.17');
  return {
    csr,
    commonName: csr.subjectName.getField('CN')[0] ?? '',
    organization: csr.subjectName.getField('O'),
    hasSANs: !!san,
  };
}

/** The signed info, the signature algorithm OID and the signature of a CertificationRequest. */
function outerParts(der: Uint8Array): { info: Buffer; oid: string; signature: Buffer } {
  const read = (off: number): { body: number; end: number } => {
    let len = der[off + 1];
    let head = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + der[off + 2 + i];
      head += n;
    }
    return { body: off + head, end: off + head + len };
  };
  const outer = read(0);
  const info = read(outer.body);
  const alg = read(info.end);
  const oid = read(alg.body);
  const sig = read(alg.end);
  const bytes = der.subarray(oid.body, oid.end);
  const parts = [Math.floor(bytes[0] / 40), bytes[0] % 40];
  let v = 0;
  for (const b of bytes.subarray(1)) {
    v = v * 128 + (b & 0x7f);
    if (!(b & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return {
    info: Buffer.from(der.subarray(outer.body, info.end)),
    oid: parts.join('.'),
    signature: Buffer.from(der.subarray(sig.body + 1, sig.end)),
  };
}

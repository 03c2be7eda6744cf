// Certificates with chosen subjects and validity for tests (expired ones included), self-signed
// with an independent library so that nothing here shares code with what is under test.
import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import { BasicConstraintsExtension, ExtendedKeyUsageExtension, X509CertificateGenerator } from '@peculiar/x509';

export interface TestPair {
  certPem: string;
  keyPem: string;
}

export async function selfSignedPair(opts: {
  cn: string;
  o?: string[];
  notBefore: Date;
  notAfter: Date;
}): Promise<TestPair> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const name = [...(opts.o ?? []).map((o) => `O=${o}`), `CN=${opts.cn}`].join(', ');
  const cert = await X509CertificateGenerator.createSelfSigned({
    name,
    notBefore: opts.notBefore,
    notAfter: opts.notAfter,
    keys,
    signingAlgorithm: alg,
    extensions: [
      new BasicConstraintsExtension(false, undefined, true),
      new ExtendedKeyUsageExtension(['1.3.6.1.5.5.7.3.2']),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
    .export({ type: 'sec1', format: 'pem' })
    .toString();
  return { certPem: cert.toString('pem') + '\n', keyPem };
}

/** A certificate for `key` (a node's new key), from a throw-away CA: what a signer would return. */
export async function certificateFor(
  key: import('node:crypto').KeyObject,
  opts: { cn: string; o?: string[]; notBefore: Date; notAfter: Date },
): Promise<string> {
  const { createPublicKey } = await import('node:crypto');
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const ca = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const publicKey = await webcrypto.subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'verify',
  ]);
  const cert = await X509CertificateGenerator.create({
    subject: [...(opts.o ?? []).map((o) => `O=${o}`), `CN=${opts.cn}`].join(', '),
    issuer: 'CN=test-ca',
    notBefore: opts.notBefore,
    notAfter: opts.notAfter,
    publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: alg,
  });
  return cert.toString('pem') + '\n';
}

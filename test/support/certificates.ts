// Certificates with chosen subjects and validity for tests (expired ones included), self-signed
// with an independent library so that nothing here shares code with what is under test.
import 'reflect-metadata';
import { createPrivateKey, webcrypto } from 'node:crypto';
import { BasicConstraintsExtension, ExtendedKeyUsageExtension, X509CertificateGenerator } from '@peculiar/x509';

export interface TestPair {
  certPem: string;
  keyPem: string;
}

export async function selfSignedPair(opts: { cn: string; o?: string[]; notBefore: Date; notAfter: Date }): Promise<TestPair> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const name = [...(opts.o ?? []).map((o) => `O=${o}`), `CN=${opts.cn}`].join(', ');
  const cert = await X509CertificateGenerator.createSelfSigned({
    name,
    notBefore: opts.notBefore,
    notAfter: opts.notAfter,
    keys,
    signingAlgorithm: alg,
    extensions: [new BasicConstraintsExtension(false, undefined, true), new ExtendedKeyUsageExtension(['1.3.6.1.5.5.7.3.2'])],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const keyPem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ type: 'sec1', format: 'pem' }).toString();
  return { certPem: cert.toString('pem') + '\n', keyPem };
}

import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pkcs10CertificateRequest, SubjectAlternativeNameExtension } from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { ipBytes } from '../../../src/apiserver/credentials/der.js';
import { makeCertificateRequest } from '../../../src/apiserver/credentials/pkcs10.js';
import { generateSelfSignedCertKey } from '../../../src/server/tls/self-signed-certificate.js';

function openssl(args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', args, (err, stdout, stderr) =>
      err ? reject(new Error(stderr || err.message)) : resolve(stdout + stderr),
    );
    child.stdin?.end(input);
  });
}

describe('serving certificate requests (kubernetes.io/kubelet-serving)', () => {
  it('carry the SANs in an extensionRequest attribute, as openssl and an independent ASN.1 reader see them', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = makeCertificateRequest(
      privateKey,
      { commonName: 'system:node:n1', organization: ['system:nodes'] },
      { dnsNames: ['n1'], ipAddresses: ['10.0.0.7', 'fd00::7'] },
    );
    const text = await openssl(['req', '-noout', '-text', '-verify'], pem);
    expect(text).toContain('verify OK');
    expect(text).toMatch(
      /Requested Extensions:\s*\n\s*X509v3 Subject Alternative Name:\s*\n\s*DNS:n1, IP Address:10\.0\.0\.7, IP Address:FD00:0:0:0:0:0:0:7/,
    );
    const csr = new Pkcs10CertificateRequest(pem);
    expect(await csr.verify()).toBe(true);
    const raw = csr.getExtension('2.5.29.17');
    const san = raw ? new SubjectAlternativeNameExtension(raw.rawData) : undefined;
    expect(san?.names.toJSON()).toEqual([
      { type: 'dns', value: 'n1' },
      { type: 'ip', value: '10.0.0.7' },
      { type: 'ip', value: 'fd00::7' },
    ]);
  });

  it('IP addresses are 4 or 16 bytes', () => {
    expect(ipBytes('10.1.2.3').toString('hex')).toBe('0a010203');
    expect(ipBytes('::1').toString('hex')).toBe('00000000000000000000000000000001');
    expect(ipBytes('fe80::1:2').toString('hex')).toBe('fe800000000000000000000000010002');
    expect(ipBytes('::ffff:10.0.0.1').toString('hex')).toBe('00000000000000000000ffff0a000001');
    expect(() => ipBytes('n1')).toThrow(/not an IP/);
  });
});

describe('the self-signed serving certificate (certutil.GenerateSelfSignedCertKey)', () => {
  it('is a one-year server certificate for the host, signed by its own CA that follows it in the file', async () => {
    const now = new Date('2026-03-01T12:00:00Z');
    const pair = await generateSelfSignedCertKey('node-1', { dnsNames: [], ipAddresses: ['10.0.0.5'] }, now);
    const [leafPem, caPem] = pair.certPem.split(/(?<=-----END CERTIFICATE-----\n)/);
    const leaf = new X509Certificate(leafPem!);
    const ca = new X509Certificate(caPem!);
    expect(leaf.subject).toBe(`CN=node-1@${now.getTime() / 1000}`);
    expect(leaf.issuer).toBe(`CN=node-1-ca@${now.getTime() / 1000}`);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.subjectAltName).toBe('DNS:node-1, IP Address:10.0.0.5');
    expect(leaf.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(new Date(leaf.validFrom).toISOString()).toBe('2026-03-01T11:00:00.000Z');
    expect(new Date(leaf.validTo).toISOString()).toBe('2027-03-01T11:00:00.000Z');
    expect(pair.keyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(leaf.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(pair.keyPem)))).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'selfsigned-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), caPem!);
      writeFileSync(join(dir, 'leaf.pem'), leafPem!);
      expect(
        await openssl([
          'verify',
          '-attime',
          String(now.getTime() / 1000),
          '-purpose',
          'sslserver',
          '-CAfile',
          join(dir, 'ca.pem'),
          join(dir, 'leaf.pem'),
        ]),
      ).toContain('OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('puts an IP host in an IP SAN', async () => {
    const pair = await generateSelfSignedCertKey('10.9.8.7', { dnsNames: [], ipAddresses: [] });
    expect(new X509Certificate(pair.certPem.split(/(?<=-----END CERTIFICATE-----\n)/)[0]!).subjectAltName).toBe(
      'IP Address:10.9.8.7',
    );
  });
});

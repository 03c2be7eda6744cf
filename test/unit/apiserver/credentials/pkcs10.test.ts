import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { Pkcs10CertificateRequest } from '@peculiar/x509';
import { describe, expect, it } from 'vitest';
import { makeCertificateRequest, parseCertificateRequest } from '../../../../src/apiserver/credentials/pkcs10.js';

/** `openssl req -text -verify` on a request given on stdin. */
function opensslText(pem: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', ['req', '-noout', '-text', '-verify'], (err, stdout, stderr) =>
      err ? reject(new Error(stderr || err.message)) : resolve(stdout + stderr),
    );
    child.stdin?.end(pem);
  });
}

const subject = { commonName: 'system:node:cp-1', organization: ['system:nodes'] };

describe('PKCS#10 certificate requests', () => {
  it('makes the request a kubelet files for an ECDSA P-256 key, as openssl reads it', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = makeCertificateRequest(privateKey, subject);
    expect(pem).toMatch(
      /^-----BEGIN CERTIFICATE REQUEST-----\n[A-Za-z0-9+/=\n]+\n-----END CERTIFICATE REQUEST-----\n$/,
    );
    const text = await opensslText(pem);
    expect(text).toContain('verify OK');
    expect(text).toMatch(/Subject: O\s*=\s*system:nodes, CN\s*=\s*system:node:cp-1/);
    expect(text).toContain('ecdsa-with-SHA256');
    expect(text).toContain('NIST CURVE: P-256');
    expect(text).toMatch(/Attributes:\s*\n\s*\(none\)/);
    const parsed = parseCertificateRequest(pem);
    expect(parsed.subject).toEqual(subject);
    expect(parsed.signatureValid).toBe(true);
    expect(parsed.publicKey.equals(publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);
  });

  it('is read the same by an independent ASN.1 implementation', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const csr = new Pkcs10CertificateRequest(
      makeCertificateRequest(privateKey, { commonName: 'system:node:n1', organization: ['system:nodes', 'extra'] }),
    );
    expect(csr.subjectName.getField('CN')).toEqual(['system:node:n1']);
    expect(csr.subjectName.getField('O')).toEqual(['system:nodes', 'extra']);
    expect(await csr.verify()).toBe(true);
  });

  it('signs with RSA keys as Go picks the hash for their size', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const text = await opensslText(makeCertificateRequest(privateKey, subject));
    expect(text).toContain('verify OK');
    expect(text).toContain('sha256WithRSAEncryption');
  });

  it('writes a name that is not printable as UTF8String and reads it back', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const parsed = parseCertificateRequest(
      makeCertificateRequest(privateKey, { commonName: 'system:node:nœud_1', organization: ['system:nodes'] }),
    );
    expect(parsed.subject.commonName).toBe('system:node:nœud_1');
  });

  it('tells a request signed by another key', () => {
    const a = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = makeCertificateRequest(a.privateKey, subject);
    const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    der[der.length - 5] ^= 0xff; // inside the signature
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    expect(parseCertificateRequest(tampered).signatureValid).toBe(false);
  });

  it('refuses a key that cannot sign a request, naming its type', () => {
    const { privateKey } = generateKeyPairSync('x25519');
    expect(() => makeCertificateRequest(privateKey, subject)).toThrow(/x25519/);
  });
});

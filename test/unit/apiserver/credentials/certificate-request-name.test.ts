import { createHash, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  bootstrapClientUsages,
  digestedName,
  nodeClientSubject,
  rotationClientUsages,
} from '../../../../src/apiserver/credentials/certificate-signing-request.js';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const subject = nodeClientSubject('cp-1');

describe('what a node client certificate request says', () => {
  it('asks for system:node:<name> in system:nodes', () => {
    expect(subject).toEqual({ commonName: 'system:node:cp-1', organization: ['system:nodes'] });
  });

  it('asks for key encipherment only with an RSA key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    expect(bootstrapClientUsages(ec.privateKey)).toEqual(['digital signature', 'client auth']);
    expect(bootstrapClientUsages(rsa.privateKey)).toEqual(['digital signature', 'client auth', 'key encipherment']);
    expect(rotationClientUsages(rsa.privateKey)).toEqual(['digital signature', 'key encipherment', 'client auth']);
  });

  it('is named node-csr-<SHA-512/256 of key, CN, O and usages>, the same for the same key', () => {
    const usages = bootstrapClientUsages(ec.privateKey);
    const name = digestedName(ec.publicKey, subject, usages);
    // The digest written out by hand: each field base64url (unpadded), then '|'.
    const h = createHash('sha512-256');
    for (const part of [
      ec.publicKey.export({ type: 'spki', format: 'der' }),
      Buffer.from('system:node:cp-1'),
      Buffer.from('system:nodes'),
      Buffer.from('digital signature'),
      Buffer.from('client auth'),
    ])
      h.update(`${part.toString('base64url')}|`);
    expect(name).toBe(`node-csr-${h.digest('base64url')}`);
    expect(name).toMatch(/^node-csr-[A-Za-z0-9_-]{43}$/);
    expect(digestedName(ec.publicKey, subject, usages)).toBe(name);
    expect(digestedName(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey, subject, usages)).not.toBe(name);
    expect(digestedName(ec.publicKey, nodeClientSubject('cp-2'), usages)).not.toBe(name);
  });
});

import { lstatSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CertificateStore,
  CertificateStoreError,
  pairTimestamp,
} from '../../../../src/apiserver/credentials/certificate-store.js';
import { createPki } from '../../../support/fake-apiserver/pki.js';
import { useTmpDir } from '../../../support/tmp.js';

const dir = useTmpDir('certificate-store');
let n = 0;
const fresh = (): string => {
  const d = join(dir, `case-${++n}`);
  mkdirSync(d, { recursive: true });
  return d;
};
const pkiDir = fresh();
const pki = createPki(pkiDir);
const a = pki.issueClientCert('system:node:a', ['system:nodes']);
const b = pki.issueClientCert('system:node:b', ['system:nodes']);
const clockAt = (iso: string) => ({ now: () => new Date(iso) });

describe('the kubelet certificate store', () => {
  it('names pair files by local time, to the second, as Go formats 2006-01-02-15-04-05', () => {
    expect(pairTimestamp(new Date(2026, 0, 2, 3, 4, 5))).toBe('2026-01-02-03-04-05');
  });

  it('writes certificate then key into one 0600 file and links -current.pem to it', () => {
    const certDir = join(fresh(), 'pki');
    const when = new Date(2026, 4, 6, 7, 8, 9);
    const store = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir, clock: { now: () => when } });
    expect(store.current()).toBeUndefined();
    const pair = store.update(a.certPem, a.keyPem);
    const file = join(certDir, 'kubelet-client-2026-05-06-07-08-09.pem');
    expect(pair.commonName).toBe('system:node:a');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    expect(text.indexOf('-----BEGIN CERTIFICATE-----')).toBe(0);
    expect(text).toMatch(/-----END CERTIFICATE-----\n-----BEGIN (EC )?PRIVATE KEY-----/);
    const current = join(certDir, 'kubelet-client-current.pem');
    expect(lstatSync(current).isSymbolicLink()).toBe(true);
    expect(readlinkSync(current)).toBe(file);
    expect(store.current()?.commonName).toBe('system:node:a');
  });

  it('switches the link to a new pair and keeps the old file', () => {
    const certDir = fresh();
    let t = new Date(2026, 0, 1, 0, 0, 0);
    const store = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir, clock: { now: () => t } });
    store.update(a.certPem, a.keyPem);
    t = new Date(2026, 0, 1, 0, 0, 30);
    store.update(b.certPem, b.keyPem);
    expect(readlinkSync(join(certDir, 'kubelet-client-current.pem'))).toBe(
      join(certDir, 'kubelet-client-2026-01-01-00-00-30.pem'),
    );
    expect(readFileSync(join(certDir, 'kubelet-client-2026-01-01-00-00-00.pem'), 'utf8')).toContain(
      a.certPem.trim().split('\n')[1],
    );
    expect(store.current()?.commonName).toBe('system:node:b');
    expect(() => lstatSync(join(certDir, 'kubelet-client-updated.pem'))).toThrow();
  });

  it("refuses a pair whose key is not the certificate's and keeps the current one", () => {
    const certDir = fresh();
    const store = new CertificateStore({
      pairNamePrefix: 'kubelet-client',
      certDir,
      clock: clockAt('2026-01-01T00:00:00Z'),
    });
    store.update(a.certPem, a.keyPem);
    expect(() => store.update(b.certPem, a.keyPem)).toThrow(/private key does not match/);
    expect(store.current()?.commonName).toBe('system:node:a');
  });

  it('finishes a switch that a crash interrupted (an -updated.pem link without -current.pem)', () => {
    const certDir = fresh();
    const file = join(certDir, 'kubelet-client-2026-01-01-00-00-00.pem');
    writeFileSync(file, a.certPem + a.keyPem, { mode: 0o600 });
    symlinkSync(file, join(certDir, 'kubelet-client-updated.pem'));
    const store = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir });
    store.recover();
    expect(readlinkSync(join(certDir, 'kubelet-client-current.pem'))).toBe(file);
    expect(store.current()?.commonName).toBe('system:node:a');
  });

  it('will not replace a -current.pem that is a regular file', () => {
    const certDir = fresh();
    writeFileSync(join(certDir, 'kubelet-client-current.pem'), a.certPem + a.keyPem);
    const store = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir });
    expect(() => store.update(b.certPem, b.keyPem)).toThrow(CertificateStoreError);
    expect(() => store.update(b.certPem, b.keyPem)).toThrow(/to be a symlink but it is a file/);
  });

  it('finds the pair in use as client-go does: -current.pem, then the given files, then <prefix>.crt/.key', () => {
    const certDir = fresh();
    const store = new CertificateStore({
      pairNamePrefix: 'kubelet-client',
      certDir,
      certFile: b.certFile,
      keyFile: b.keyFile,
    });
    expect(store.currentFiles()).toEqual({ certFile: b.certFile, keyFile: b.keyFile });
    const plain = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir });
    expect(plain.currentFiles()).toBeUndefined();
    writeFileSync(join(certDir, 'kubelet-client.crt'), a.certPem);
    writeFileSync(join(certDir, 'kubelet-client.key'), a.keyPem);
    expect(plain.current()?.commonName).toBe('system:node:a');
    store.update(a.certPem, a.keyPem);
    expect(store.currentFiles()).toEqual({ certFile: store.currentPath, keyFile: store.currentPath });
  });

  it('names the file when the current pair does not load', () => {
    const certDir = fresh();
    writeFileSync(join(certDir, 'kubelet-client.crt'), 'not a certificate');
    writeFileSync(join(certDir, 'kubelet-client.key'), a.keyPem);
    const store = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir });
    expect(() => store.current()).toThrow(/kubelet-client\.crt .*no CERTIFICATE block/);
  });
});

import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ClientCertificateFiles } from '../../../../src/apiserver/credentials/client-certificate.js';
import { memoryLogger } from '../../../../src/log/logger.js';
import { selfSignedPair, type TestPair } from '../../../support/certificates.js';
import { useTmpDir } from '../../../support/tmp.js';

const dir = useTmpDir('client-certificate');
let a: TestPair;
let b: TestPair;
const hour = 3600_000;

beforeAll(async () => {
  const t = Date.now();
  a = await selfSignedPair({
    cn: 'system:node:a',
    o: ['system:nodes'],
    notBefore: new Date(t - hour),
    notAfter: new Date(t + hour),
  });
  b = await selfSignedPair({
    cn: 'system:node:b',
    o: ['system:nodes'],
    notBefore: new Date(t - hour),
    notAfter: new Date(t + hour),
  });
});

/** Replaces a file in one step, as an operator's tooling or the store does. */
function replace(path: string, content: string): void {
  writeFileSync(`${path}.new`, content);
  renameSync(`${path}.new`, path);
}

describe('the client certificate read from files', () => {
  it('takes a replaced pair on the next look after the recheck period, and keeps the same object until then', () => {
    const file = join(dir, 'pair.pem');
    writeFileSync(file, a.certPem + a.keyPem);
    let now = 1_000_000;
    const { logger, lines } = memoryLogger(0);
    const src = new ClientCertificateFiles({
      locate: () => ({ certFile: file, keyFile: file }),
      logger,
      recheckMs: 60_000,
      now: () => now,
    });
    const first = src.current();
    expect(src.loaded()?.commonName).toBe('system:node:a');
    expect(first?.cert.toString()).toContain('BEGIN CERTIFICATE');
    expect(first?.cert.toString()).not.toContain('PRIVATE KEY');
    expect(first?.key.toString()).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    replace(file, b.certPem + b.keyPem);
    now += 59_000;
    expect(src.current()).toBe(first);
    now += 1_000;
    expect(src.current()).not.toBe(first);
    expect(src.loaded()?.commonName).toBe('system:node:b');
    expect(
      lines.some(
        (l) => l.includes('Client certificate changed on disk; new connections use it') && l.includes('system:node:b'),
      ),
    ).toBe(true);
    now += 60_000;
    const second = src.current();
    now += 60_000;
    expect(src.current()).toBe(second);
  });

  it('keeps the pair in use when the new one does not load, and says so once', () => {
    const cert = join(dir, 'c.crt');
    const key = join(dir, 'c.key');
    writeFileSync(cert, a.certPem);
    writeFileSync(key, a.keyPem);
    const { logger, lines } = memoryLogger(0);
    const src = new ClientCertificateFiles({ locate: () => ({ certFile: cert, keyFile: key }), logger });
    const first = src.current();
    replace(cert, b.certPem); // the key is still a's
    expect(src.reload()).toBe(false);
    expect(src.reload()).toBe(false);
    expect(src.current()).toBe(first);
    expect(lines.filter((l) => l.includes('not usable')).length).toBe(1);
    expect(lines.find((l) => l.includes('not usable'))).toContain('private key does not match the certificate');
    replace(key, b.keyPem);
    expect(src.reload()).toBe(true);
    expect(src.loaded()?.commonName).toBe('system:node:b');
  });

  it("follows the pair when it moves (the store's -current.pem appears) and tells listeners", () => {
    const old = join(dir, 'old.pem');
    const current = join(dir, 'current.pem');
    writeFileSync(old, a.certPem + a.keyPem);
    let where = old;
    const { logger } = memoryLogger(0);
    const src = new ClientCertificateFiles({ locate: () => ({ certFile: where, keyFile: where }), logger });
    const seen: string[] = [];
    src.onChange((p) => seen.push(p.commonName));
    writeFileSync(current, b.certPem + b.keyPem);
    where = current;
    expect(src.reload()).toBe(true);
    expect(seen).toEqual(['system:node:b']);
  });
});

import type { KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CertificatePair } from '../../../../src/apiserver/credentials/certificate-pair.js';
import { CertificateRotation } from '../../../../src/apiserver/credentials/certificate-rotation.js';
import { CertificateStore } from '../../../../src/apiserver/credentials/certificate-store.js';
import type { ApiClient } from '../../../../src/apiserver/client/client.js';
import { memoryLogger } from '../../../../src/log/logger.js';
import { certificateFor, selfSignedPair } from '../../../support/certificates.js';
import { useTmpDir } from '../../../support/tmp.js';

const dir = useTmpDir('certificate-rotation');
const subject = { commonName: 'system:node:n1', organization: ['system:nodes'] };
const hour = 3600_000;
let cases = 0;

/** A rotation whose requests are answered by `issue` (no server): what it asked with, and what it stored. */
function setup(issue: (key: KeyObject) => Promise<string>, opts: { current?: CertificatePair; force?: boolean } = {}) {
  const certDir = join(dir, `c${++cases}`);
  mkdirSync(certDir, { recursive: true });
  const store = new CertificateStore({ pairNamePrefix: 'kubelet-client', certDir });
  const log = memoryLogger(2);
  const askedWith: (CertificatePair | undefined)[] = [];
  const keys: KeyObject[] = [];
  let rotated: (p: CertificatePair) => void = () => {};
  const done = new Promise<CertificatePair>((r) => (rotated = r));
  const rotation = new CertificateRotation({
    store,
    subject,
    clientFor: (current) => {
      askedWith.push(current);
      return { client: {} as ApiClient, release: () => {} };
    },
    request: async (_client, key) => {
      keys.push(key);
      return issue(key);
    },
    onRotated: (p) => rotated(p),
    forceRotation: opts.force,
    logger: log.logger,
    random: () => 0.5,
  });
  rotation.start(opts.current);
  return { rotation, store, log, askedWith, keys, done };
}

const issueFor = (cn: string) => (key: KeyObject) =>
  certificateFor(key, {
    cn,
    o: ['system:nodes'],
    notBefore: new Date(Date.now() - hour),
    notAfter: new Date(Date.now() + hour),
  });

describe('the rotation manager', () => {
  it('requests a pair at once when there is none, with the bootstrap credentials and a new ECDSA P-256 key, and stores it', async () => {
    const { rotation, store, askedWith, keys, done } = setup(issueFor('system:node:n1'));
    const pair = await done;
    await rotation.stop();
    expect(askedWith).toEqual([undefined]);
    expect(keys[0].asymmetricKeyType).toBe('ec');
    expect(keys[0].asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(pair.commonName).toBe('system:node:n1');
    expect(store.current()?.notAfter).toEqual(pair.notAfter);
  });

  it('replaces a seeded pair at once, asking with that pair', async () => {
    const seed = await selfSignedPair({
      cn: 'system:node:n1',
      o: ['system:nodes'],
      notBefore: new Date(Date.now() - hour),
      notAfter: new Date(Date.now() + 100 * hour),
    });
    const { parseCertificatePair } = await import('../../../../src/apiserver/credentials/certificate-pair.js');
    const current = parseCertificatePair(seed.certPem, seed.keyPem);
    const { rotation, askedWith, done, log } = setup(issueFor('system:node:n1'), { current, force: true });
    await done;
    await rotation.stop();
    expect(askedWith).toEqual([current]);
    expect(log.lines.some((l) => l.includes('"reason":"replacing the bootstrap certificate"'))).toBe(true);
  });

  it('does not store a certificate for another subject, and retries instead of asking again at once', async () => {
    const { rotation, store, log } = setup(issueFor('system:node:other'));
    const { waitFor } = await import('../../../support/wait.js');
    await waitFor(() => log.lines.find((l) => l.includes('Requesting a client certificate failed; retrying')), {
      timeoutMs: 10_000,
      what: 'the failed attempt',
    });
    await rotation.stop();
    expect(store.current()).toBeUndefined();
    const line = log.lines.find((l) => l.includes('Requesting a client certificate failed; retrying'))!;
    expect(line).toContain('the issued certificate is for system:node:other (system:nodes), not system:node:n1');
    expect(JSON.parse(line).retryInMs).toBeGreaterThanOrEqual(2000);
  });
});

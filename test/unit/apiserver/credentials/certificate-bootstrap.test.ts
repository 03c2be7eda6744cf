import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  checkClientConfig,
  loadOrGenerateKeyFile,
  writeKubeconfigFromBootstrapping,
} from '../../../../src/apiserver/credentials/certificate-bootstrap.js';
import { loadKubeconfig } from '../../../../src/apiserver/client/kubeconfig.js';
import { memoryLogger } from '../../../../src/log/logger.js';
import { selfSignedPair, type TestPair } from '../../../support/certificates.js';
import { useTmpDir } from '../../../support/tmp.js';

const dir = useTmpDir('certificate-bootstrap');
const now = new Date();
let valid: TestPair;
let expired: TestPair;

function kubeconfig(name: string, user: Record<string, string>): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: ${JSON.stringify(user)}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`,
  );
  return path;
}
const b64 = (s: string): string => Buffer.from(s).toString('base64');

beforeAll(async () => {
  valid = await selfSignedPair({
    cn: 'system:node:n1',
    o: ['system:nodes'],
    notBefore: new Date(now.getTime() - 3600_000),
    notAfter: new Date(now.getTime() + 3600_000),
  });
  expired = await selfSignedPair({
    cn: 'system:node:n1',
    o: ['system:nodes'],
    notBefore: new Date(now.getTime() - 7200_000),
    notAfter: new Date(now.getTime() - 3600_000),
  });
});

describe('whether the kubeconfig still holds a usable client certificate (isClientConfigStillValid)', () => {
  it('is usable with a current certificate and its key', () => {
    expect(
      checkClientConfig(
        kubeconfig('ok', { 'client-certificate-data': b64(valid.certPem), 'client-key-data': b64(valid.keyPem) }),
        now,
      ),
    ).toEqual({ valid: true });
  });

  it('is not when missing, token-only, expired, mismatched or unreadable, and says why', () => {
    expect(checkClientConfig(join(dir, 'nope'), now)).toEqual({ valid: false, reason: 'does not exist' });
    expect(checkClientConfig(kubeconfig('token', { token: 'abc' }), now)).toEqual({
      valid: false,
      reason: 'has no client certificate',
    });
    const old = checkClientConfig(
      kubeconfig('expired', {
        'client-certificate-data': b64(expired.certPem),
        'client-key-data': b64(expired.keyPem),
      }),
      now,
    );
    expect(old.valid).toBe(false);
    expect(!old.valid && old.reason).toMatch(/^client certificate expired at /);
    const mixed = checkClientConfig(
      kubeconfig('mixed', { 'client-certificate-data': b64(valid.certPem), 'client-key-data': b64(expired.keyPem) }),
      now,
    );
    expect(!mixed.valid && mixed.reason).toBe('client certificate: private key does not match the certificate');
    const gone = checkClientConfig(
      kubeconfig('gone', {
        'client-certificate': '/nonexistent/kubelet-client-current.pem',
        'client-key': '/nonexistent/kubelet-client-current.pem',
      }),
      now,
    );
    expect(!gone.valid && gone.reason).toMatch(/cannot read client certificate \/nonexistent/);
  });
});

describe('the kubeconfig written after bootstrapping', () => {
  it('names the current pair for certificate and key, with the bootstrap server and CA file', () => {
    const path = join(dir, 'written', 'kubelet.conf');
    writeKubeconfigFromBootstrapping(
      {
        server: 'https://10.0.0.1:6443',
        ca: Buffer.from('CA'),
        caFile: '/etc/kubernetes/pki/ca.crt',
        token: 'abcdef.0123456789abcdef',
        source: 'b',
      },
      path,
      '/var/lib/kubelet/pki/kubelet-client-current.pem',
    );
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const doc = parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    expect(doc).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'default-cluster',
          cluster: { server: 'https://10.0.0.1:6443', 'certificate-authority': '/etc/kubernetes/pki/ca.crt' },
        },
      ],
      contexts: [
        {
          name: 'default-context',
          context: { cluster: 'default-cluster', namespace: 'default', user: 'default-auth' },
        },
      ],
      'current-context': 'default-context',
      preferences: {},
      users: [
        {
          name: 'default-auth',
          user: {
            'client-certificate': '/var/lib/kubelet/pki/kubelet-client-current.pem',
            'client-key': '/var/lib/kubelet/pki/kubelet-client-current.pem',
          },
        },
      ],
    });
  });

  it('embeds CA data when the bootstrap kubeconfig did, keeps tls-server-name, and loads as a kubeconfig', () => {
    const pki = join(dir, 'pki');
    mkdirSync(pki, { recursive: true });
    writeFileSync(join(pki, 'kubelet-client-current.pem'), valid.certPem + valid.keyPem);
    const path = join(dir, 'embedded.conf');
    writeKubeconfigFromBootstrapping(
      { server: 'https://10.0.0.1:6443', ca: Buffer.from('CADATA'), tlsServerName: 'kubernetes', source: 'b' },
      path,
      join(pki, 'kubelet-client-current.pem'),
    );
    const conn = loadKubeconfig(path);
    expect(conn.ca?.toString()).toBe('CADATA');
    expect(conn.tlsServerName).toBe('kubernetes');
    expect(conn.certFile).toBe(join(pki, 'kubelet-client-current.pem'));
    expect(conn.token).toBeUndefined();
    expect(checkClientConfig(path, now)).toEqual({ valid: true });
  });
});

describe('the pending private key (kubelet-client.key.tmp)', () => {
  it('is made once (ECDSA P-256, 0600) and reused until the certificate arrives', () => {
    const { logger } = memoryLogger();
    const path = join(dir, 'keys', 'kubelet-client.key.tmp');
    const first = loadOrGenerateKeyFile(path, logger);
    expect(first).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadOrGenerateKeyFile(path, logger)).toBe(first);
  });

  it('is replaced, with a warning, when what is there is not a key', () => {
    const { logger, lines } = memoryLogger();
    const path = join(dir, 'bad.key.tmp');
    writeFileSync(path, 'garbage');
    expect(loadOrGenerateKeyFile(path, logger)).toMatch(/BEGIN EC PRIVATE KEY/);
    expect(lines.join('\n')).toContain('Pending private key is not a key');
  });
});

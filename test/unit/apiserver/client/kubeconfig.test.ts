import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { KubeconfigError, loadKubeconfig } from '../../../../src/apiserver/client/kubeconfig.js';
import { useTmpDir } from '../../../support/tmp.js';

const dir = useTmpDir('kubeconfig');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function write(
  name: string,
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'ctx',
      ...extra,
    }),
  );
  return path;
}

describe('loadKubeconfig', () => {
  it('reads inline certificate data', () => {
    const k = loadKubeconfig(
      write(
        'inline',
        { server: 'https://10.0.0.1:6443/', 'certificate-authority-data': b64('CA') },
        { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') },
      ),
    );
    expect(k.server).toBe('https://10.0.0.1:6443');
    expect(k.ca?.toString()).toBe('CA');
    expect(k.cert?.toString()).toBe('CERT');
    expect(k.key?.toString()).toBe('KEY');
  });

  it('resolves relative file paths against the kubeconfig directory', () => {
    const sub = join(dir, 'pki');
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, 'ca.crt'), 'CAFILE');
    writeFileSync(join(sub, 'node.crt'), 'CERTFILE');
    writeFileSync(join(sub, 'node.key'), 'KEYFILE');
    const k = loadKubeconfig(
      write(
        'files',
        { server: 'https://api:6443', 'certificate-authority': 'pki/ca.crt', 'tls-server-name': 'kubernetes' },
        { 'client-certificate': 'pki/node.crt', 'client-key': join(sub, 'node.key') },
      ),
    );
    expect([k.ca?.toString(), k.cert?.toString(), k.key?.toString(), k.tlsServerName]).toEqual([
      'CAFILE',
      'CERTFILE',
      'KEYFILE',
      'kubernetes',
    ]);
  });

  it('takes a token or a token file', () => {
    writeFileSync(join(dir, 'token'), 'abc\n');
    expect(loadKubeconfig(write('token', { server: 'https://a:1' }, { token: 't0k' })).token).toBe('t0k');
    expect(loadKubeconfig(write('tokenfile', { server: 'https://a:1' }, { tokenFile: 'token' })).tokenFile).toBe(
      join(dir, 'token'),
    );
  });

  const refused: [string, () => string, RegExp][] = [
    [
      'insecure-skip-tls-verify',
      () => write('insecure', { server: 'https://a:1', 'insecure-skip-tls-verify': true }, { token: 't' }),
      /insecure-skip-tls-verify is set; bootlet always verifies/,
    ],
    ['plain http', () => write('http', { server: 'http://a:1' }, { token: 't' }), /is not https/],
    ['no credentials', () => write('nocreds', { server: 'https://a:1' }, {}), /has no credentials/],
    [
      'a certificate without a key',
      () => write('nokey', { server: 'https://a:1' }, { 'client-certificate-data': b64('C') }),
      /certificate without a key/,
    ],
    [
      'a missing CA file',
      () => write('noca', { server: 'https://a:1', 'certificate-authority': 'nope.crt' }, { token: 't' }),
      /cannot read certificate authority .*nope\.crt: ENOENT/,
    ],
    [
      'exec credentials',
      () => write('exec', { server: 'https://a:1' }, { exec: { command: 'x' } }),
      /uses exec, which bootlet does not support/,
    ],
    [
      'no current-context',
      () => write('nocontext', { server: 'https://a:1' }, { token: 't' }, { 'current-context': '' }),
      /no current-context/,
    ],
    [
      'an unknown context',
      () => write('badcontext', { server: 'https://a:1' }, { token: 't' }, { 'current-context': 'other' }),
      /context "other" not found/,
    ],
    ['no server', () => write('noserver', {}, { token: 't' }), /has no server/],
    ['a missing file', () => join(dir, 'absent'), /cannot read: ENOENT/],
    [
      'broken YAML',
      () => {
        writeFileSync(join(dir, 'broken'), 'clusters: [\n  - {');
        return join(dir, 'broken');
      },
      /not valid YAML/,
    ],
  ];
  for (const [what, make, message] of refused)
    it(`refuses ${what} with one clear line`, () => {
      const path = make();
      let err: unknown;
      try {
        loadKubeconfig(path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KubeconfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain('\n');
    });
});

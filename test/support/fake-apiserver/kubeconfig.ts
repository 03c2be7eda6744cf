import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { KeyPair } from './pki.js';

export interface KubeconfigCredentials {
  cert?: KeyPair;
  token?: string;
}

/** Writes a kubeconfig with one cluster, user and context, embedded (`*-data`) or by file path. */
export function writeKubeconfigFile(
  path: string,
  server: { url: string; caFile: string; caPem: string },
  user: string,
  creds: KubeconfigCredentials,
  embed: boolean,
): void {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const cluster = embed
    ? { server: server.url, 'certificate-authority-data': b64(server.caPem) }
    : { server: server.url, 'certificate-authority': server.caFile };
  const u: Record<string, string> = {};
  if (creds.token) u.token = creds.token;
  if (creds.cert && embed) {
    u['client-certificate-data'] = b64(creds.cert.certPem);
    u['client-key-data'] = b64(creds.cert.keyPem);
  } else if (creds.cert) {
    u['client-certificate'] = creds.cert.certFile;
    u['client-key'] = creds.cert.keyFile;
  }
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'fake', cluster }],
    users: [{ name: user, user: u }],
    contexts: [{ name: 'fake', context: { cluster: 'fake', user } }],
    'current-context': 'fake',
    preferences: {},
  };
  writeFileSync(path, stringify(config), { mode: 0o600 });
}

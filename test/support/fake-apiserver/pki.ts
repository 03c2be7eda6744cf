import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KeyPair {
  certFile: string;
  keyFile: string;
  certPem: string;
  keyPem: string;
}

export interface Pki {
  caFile: string;
  caPem: string;
  /** The CA's private key, for the CSR signer. */
  caKeyPem: string;
  server: KeyPair;
  issueClientCert(user: string, groups: string[]): KeyPair;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** An RFC 4514-ish subject for `openssl -subj`: groups become O, the user CN. */
function subject(user: string, groups: string[]): string {
  const esc = (s: string): string => s.replace(/([/\\=+])/g, '\\$1');
  return groups.map((g) => `/O=${esc(g)}`).join('') + `/CN=${esc(user)}`;
}

let serial = 0;

/** A throw-away CA (P-256 keys: fast) with a serving cert for 127.0.0.1/localhost, all under dir. */
export function createPki(dir: string): Pki {
  const caKey = join(dir, 'ca.key');
  const caFile = join(dir, 'ca.crt');
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      caKey,
      '-out',
      caFile,
      '-days',
      '3650',
      '-subj',
      '/CN=fake-kube-apiserver-ca',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
    ],
    dir,
  );

  const issue = (base: string, subj: string, ext: string): KeyPair => {
    const keyFile = join(dir, `${base}.key`);
    const csr = join(dir, `${base}.csr`);
    const certFile = join(dir, `${base}.crt`);
    const extFile = join(dir, `${base}.ext`);
    writeFileSync(extFile, ext);
    openssl(
      [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        csr,
        '-subj',
        subj,
      ],
      dir,
    );
    openssl(
      [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        caFile,
        '-CAkey',
        caKey,
        '-set_serial',
        String(Date.now() * 1000 + ++serial),
        '-days',
        '3650',
        '-out',
        certFile,
        '-extfile',
        extFile,
      ],
      dir,
    );
    return { certFile, keyFile, certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
  };

  const server = issue(
    'apiserver',
    '/CN=kube-apiserver',
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n' +
      'extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost,IP:0:0:0:0:0:0:0:1\n',
  );

  let clients = 0;
  return {
    caFile,
    caPem: readFileSync(caFile, 'utf8'),
    caKeyPem: readFileSync(caKey, 'utf8'),
    server,
    issueClientCert(user, groups) {
      const base = `client-${++clients}-${user.replace(/[^a-zA-Z0-9_.-]/g, '_')}`;
      return issue(
        base,
        subject(user, groups),
        'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
      );
    },
  };
}

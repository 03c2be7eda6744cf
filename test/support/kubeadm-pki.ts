// The certificates and kubeconfigs `kubeadm init` makes (certs and kubeconfig phases) for one
// control-plane node, made with the openssl command line: the files kubeadm's manifests name,
// with kubeadm's subjects, SANs and usages (pkiutil, certs.go, kubeconfig.go), RSA 2048 keys in
// PKCS#1 as kubeadm writes them, keys 0600.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { run } from '../../dev/exec.js';

export interface KubeadmPkiOptions {
  nodeName: string;
  advertiseAddress: string;
  /** First address of the service subnet (10.96.0.1 for kubeadm's default 10.96.0.0/12). */
  serviceIP: string;
  dnsDomain: string;
  /** Where the kubeconfigs point: https://<advertise address>:6443. */
  server: string;
}

type Usage = 'server' | 'client' | 'peer';

interface Leaf {
  file: string;
  ca: 'ca' | 'etcd/ca' | 'front-proxy-ca';
  cn: string;
  o?: string;
  usage: Usage;
  dns?: string[];
  ips?: string[];
}

const openssl = (args: string[], cwd: string) => run('openssl', args, { cwd, timeoutMs: 60_000 });

function extensions(l: Leaf): string {
  const eku = { server: 'serverAuth', client: 'clientAuth', peer: 'serverAuth,clientAuth' }[l.usage];
  const san = [...(l.dns ?? []).map((d) => `DNS:${d}`), ...(l.ips ?? []).map((ip) => `IP:${ip}`)];
  return [
    '[leaf]',
    'basicConstraints = critical,CA:FALSE',
    'keyUsage = critical,digitalSignature,keyEncipherment',
    `extendedKeyUsage = ${eku}`,
    'authorityKeyIdentifier = keyid',
    ...(san.length > 0 ? [`subjectAltName = ${san.join(',')}`] : []),
    '',
  ].join('\n');
}

const subject = (cn: string, o?: string) => `${o ? `/O=${o}` : ''}/CN=${cn}`;

async function key(dir: string, file: string): Promise<void> {
  await openssl(['genrsa', '-traditional', '-out', `${file}.key`, '2048'], dir);
  fs.chmodSync(path.join(dir, `${file}.key`), 0o600);
}

async function ca(dir: string, file: string, cn: string): Promise<void> {
  await key(dir, file);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      `${file}.key`,
      '-subj',
      subject(cn),
      '-days',
      '3650',
      '-sha256',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign',
      '-addext',
      'subjectKeyIdentifier=hash',
      '-out',
      `${file}.crt`,
    ],
    dir,
  );
}

async function leaf(dir: string, l: Leaf): Promise<void> {
  await key(dir, l.file);
  const ext = `${l.file}.ext`;
  fs.writeFileSync(path.join(dir, ext), extensions(l));
  await openssl(['req', '-new', '-key', `${l.file}.key`, '-subj', subject(l.cn, l.o), '-out', `${l.file}.csr`], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      `${l.file}.csr`,
      '-CA',
      `${l.ca}.crt`,
      '-CAkey',
      `${l.ca}.key`,
      '-set_serial',
      `0x${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`,
      '-days',
      '365',
      '-sha256',
      '-extfile',
      ext,
      '-extensions',
      'leaf',
      '-out',
      `${l.file}.crt`,
    ],
    dir,
  );
  fs.rmSync(path.join(dir, ext));
  fs.rmSync(path.join(dir, `${l.file}.csr`));
}

function kubeconfig(pki: string, o: KubeadmPkiOptions, user: string, certFile: string): string {
  const b64 = (f: string) => fs.readFileSync(path.join(pki, f)).toString('base64');
  return `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${b64('ca.crt')}
    server: ${o.server}
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: ${user}
  name: ${user}@kubernetes
current-context: ${user}@kubernetes
kind: Config
preferences: {}
users:
- name: ${user}
  user:
    client-certificate-data: ${b64(`${certFile}.crt`)}
    client-key-data: ${b64(`${certFile}.key`)}
`;
}

/**
 * Writes `<kubernetesDir>/pki/...` and the kubeconfigs the control-plane manifests mount
 * (controller-manager.conf, scheduler.conf). kubelet.conf is not written: the node stays
 * standalone, as before `kubeadm init` has an API server to bootstrap against.
 */
export async function writeKubeadmPki(kubernetesDir: string, o: KubeadmPkiOptions): Promise<void> {
  const pki = path.join(kubernetesDir, 'pki');
  fs.mkdirSync(path.join(pki, 'etcd'), { recursive: true, mode: 0o755 });
  await Promise.all([
    ca(pki, 'ca', 'kubernetes'),
    ca(pki, 'etcd/ca', 'etcd-ca'),
    ca(pki, 'front-proxy-ca', 'front-proxy-ca'),
  ]);
  const etcdNames = { dns: [o.nodeName, 'localhost'], ips: [o.advertiseAddress, '127.0.0.1', '0:0:0:0:0:0:0:1'] };
  const leaves: Leaf[] = [
    {
      file: 'apiserver',
      ca: 'ca',
      cn: 'kube-apiserver',
      usage: 'server',
      dns: [
        o.nodeName,
        'kubernetes',
        'kubernetes.default',
        'kubernetes.default.svc',
        `kubernetes.default.svc.${o.dnsDomain}`,
      ],
      ips: [o.serviceIP, o.advertiseAddress],
    },
    {
      file: 'apiserver-kubelet-client',
      ca: 'ca',
      cn: 'kube-apiserver-kubelet-client',
      o: 'kubeadm:cluster-admins',
      usage: 'client',
    },
    { file: 'front-proxy-client', ca: 'front-proxy-ca', cn: 'front-proxy-client', usage: 'client' },
    { file: 'etcd/server', ca: 'etcd/ca', cn: o.nodeName, usage: 'peer', ...etcdNames },
    { file: 'etcd/peer', ca: 'etcd/ca', cn: o.nodeName, usage: 'peer', ...etcdNames },
    { file: 'etcd/healthcheck-client', ca: 'etcd/ca', cn: 'kube-etcd-healthcheck-client', usage: 'client' },
    { file: 'apiserver-etcd-client', ca: 'etcd/ca', cn: 'kube-apiserver-etcd-client', usage: 'client' },
    { file: 'controller-manager', ca: 'ca', cn: 'system:kube-controller-manager', usage: 'client' },
    { file: 'scheduler', ca: 'ca', cn: 'system:kube-scheduler', usage: 'client' },
  ];
  const saKey = (async () => {
    await key(pki, 'sa');
    await openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], pki);
  })();
  await Promise.all([...leaves.map((l) => leaf(pki, l)), saKey]);
  // The two client pairs live only inside their kubeconfigs, as kubeadm's kubeconfig phase does.
  for (const [conf, user, cert] of [
    ['controller-manager.conf', 'system:kube-controller-manager', 'controller-manager'],
    ['scheduler.conf', 'system:kube-scheduler', 'scheduler'],
  ] as const) {
    fs.writeFileSync(path.join(kubernetesDir, conf), kubeconfig(pki, o, user, cert), { mode: 0o600 });
    fs.rmSync(path.join(pki, `${cert}.crt`));
    fs.rmSync(path.join(pki, `${cert}.key`));
  }
}

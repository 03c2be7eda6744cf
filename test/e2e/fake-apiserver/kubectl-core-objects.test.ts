// ConfigMaps, Secrets, Services and ServiceAccounts through the real kubectl: create, get (the
// server's printers), watch, edit, delete, the validation it meets, and the objects a fresh cluster's
// controllers keep in every namespace.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from './kubectl.js';

let server: FakeApiServer;
let dir: string;
let kubectl: Kubectl;

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-core-objects');
  server = await startFakeApiServer();
  kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
});

afterAll(async () => {
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

describe('a fresh cluster', () => {
  it('has the kubernetes Service, and a default ServiceAccount and kube-root-ca.crt in every namespace', async () => {
    const svc = await kubectl.ok(['get', 'svc', 'kubernetes', '-n', 'default']);
    expect(svc).toMatch(
      /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\nkubernetes\s+ClusterIP\s+10\.96\.0\.1\s+<none>\s+443\/TCP\s+\d+s\n$/,
    );
    const spec = JSON.parse(await kubectl.ok(['get', 'svc', 'kubernetes', '-n', 'default', '-o', 'json'])) as {
      spec: Record<string, unknown>;
      metadata: { labels: Record<string, string> };
    };
    expect(spec.spec).toMatchObject({
      clusterIP: '10.96.0.1',
      clusterIPs: ['10.96.0.1'],
      type: 'ClusterIP',
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
    });
    expect(spec.metadata.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
    const sas = await kubectl.ok(['get', 'sa', '-A', '--no-headers']);
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease'])
      expect(sas).toMatch(new RegExp(`^${ns}\\s+default\\s+0\\s+\\d+s$`, 'm'));
    const ca = await kubectl.ok([
      'get',
      'cm',
      'kube-root-ca.crt',
      '-n',
      'kube-public',
      '-o',
      'jsonpath={.data.ca\\.crt}',
    ]);
    expect(ca).toBe(server.caPem);
  });

  it('gives a namespace created later its ServiceAccount and root CA ConfigMap, and puts them back when deleted or edited', async () => {
    await kubectl.ok(['create', 'namespace', 'later']);
    expect(server.object('serviceaccounts', 'later', 'default')).toBeDefined();
    expect(server.object('configmaps', 'later', 'kube-root-ca.crt')?.data).toEqual({ 'ca.crt': server.caPem });
    expect(await kubectl.ok(['delete', 'cm', 'kube-root-ca.crt', '-n', 'later'])).toBe(
      'configmap "kube-root-ca.crt" deleted from later namespace\n',
    );
    await waitFor(() => server.object('configmaps', 'later', 'kube-root-ca.crt') !== undefined, {
      timeoutMs: 5000,
      what: 'kube-root-ca.crt back',
    });
    await kubectl.ok(['patch', 'cm', 'kube-root-ca.crt', '-n', 'later', '-p', '{"data":{"ca.crt":"forged"}}']);
    await waitFor(
      () => server.object('configmaps', 'later', 'kube-root-ca.crt')?.data?.['ca.crt' as never] === server.caPem,
      { timeoutMs: 5000, what: 'ca.crt restored' },
    );
    await kubectl.ok(['delete', 'sa', 'default', '-n', 'later']);
    await waitFor(() => server.object('serviceaccounts', 'later', 'default') !== undefined, {
      timeoutMs: 5000,
      what: 'default SA back',
    });
    await kubectl.ok(['delete', 'namespace', 'later']);
    expect(server.objects('configmaps', 'later')).toEqual([]);
  });
});

describe('ServiceAccount admission (opt-in)', () => {
  it('fills in the default account and mounts kube-api-access-*, and refuses a missing account', async () => {
    server.serviceAccountAdmission(true);
    try {
      const file = join(dir, 'sa-pod.yaml');
      writeFileSync(
        file,
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: sa-pod\nspec:\n  initContainers:\n  - name: init\n    image: busybox:1.36\n  containers:\n  - name: c\n    image: busybox:1.36\n',
      );
      await kubectl.ok(['create', '-f', file]);
      const spec = server.object('pods', 'default', 'sa-pod')?.spec as {
        serviceAccountName: string;
        volumes: { name: string; projected: unknown }[];
        containers: { volumeMounts: unknown[] }[];
        initContainers: { volumeMounts: unknown[] }[];
      };
      expect(spec.serviceAccountName).toBe('default');
      expect(spec.volumes).toHaveLength(1);
      const volume = spec.volumes[0];
      expect(volume.name).toMatch(/^kube-api-access-[a-z0-9]{5}$/);
      expect(volume.projected).toEqual({
        defaultMode: 420,
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          {
            downwardAPI: {
              items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }],
            },
          },
        ],
      });
      const mount = { name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' };
      expect(spec.containers[0].volumeMounts).toEqual([mount]);
      expect(spec.initContainers[0].volumeMounts).toEqual([mount]);
      writeFileSync(
        file,
        'apiVersion: v1\nkind: Pod\nmetadata:\n  name: no-sa\nspec:\n  serviceAccountName: missing\n  containers:\n  - name: c\n    image: busybox:1.36\n',
      );
      const refused = await kubectl.run(['create', '-f', file]);
      expect(refused.stderr).toContain(
        'pods "no-sa" is forbidden: error looking up service account default/missing: serviceaccount "missing" not found',
      );
    } finally {
      server.serviceAccountAdmission(false);
    }
  });
});

describe('kubectl describe', () => {
  it('describes a ConfigMap, a Secret (sizes, not values) and a ServiceAccount', async () => {
    await kubectl.ok(['create', 'secret', 'generic', 'described', '--from-literal=password=hunter2']);
    const cm = await kubectl.ok(['describe', 'configmap', 'kube-root-ca.crt', '-n', 'default']);
    expect(cm).toMatch(/^Name:\s+kube-root-ca\.crt$/m);
    expect(cm).toContain('-----BEGIN CERTIFICATE-----');
    const secret = await kubectl.ok(['describe', 'secret', 'described']);
    expect(secret).toMatch(/^Type:\s+Opaque$/m);
    expect(secret).toMatch(/^password:\s+7 bytes$/m);
    expect(secret).not.toContain('hunter2');
    expect(await kubectl.ok(['describe', 'sa', 'default'])).toMatch(/^Name:\s+default$/m);
  });
});

describe('ConfigMaps', () => {
  it('create, get, edit by patch and apply, delete', async () => {
    expect(
      await kubectl.ok([
        'create',
        'configmap',
        'proxy',
        '-n',
        'kube-system',
        '--from-literal=config.conf=mode: iptables',
        '--from-literal=kubeconfig.conf=x',
      ]),
    ).toBe('configmap/proxy created\n');
    expect(await kubectl.ok(['get', 'cm', 'proxy', '-n', 'kube-system'])).toMatch(
      /^NAME\s+DATA\s+AGE\nproxy\s+2\s+\d+s\n$/,
    );
    await kubectl.ok([
      'patch',
      'configmap',
      'proxy',
      '-n',
      'kube-system',
      '--type=merge',
      '-p',
      '{"data":{"config.conf":"mode: ipvs"}}',
    ]);
    expect(server.object('configmaps', 'kube-system', 'proxy')?.data).toEqual({
      'config.conf': 'mode: ipvs',
      'kubeconfig.conf': 'x',
    });
    const file = join(dir, 'cm.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: proxy\n  namespace: kube-system\ndata:\n  config.conf: "mode: nftables"\nbinaryData:\n  blob: AAEC\n',
    );
    expect(await kubectl.ok(['apply', '-f', file])).toMatch(/^configmap\/proxy (configured|created)\n$/);
    // apply leaves alone the key it never managed (kubeconfig.conf came from create).
    expect(await kubectl.ok(['get', 'cm', 'proxy', '-n', 'kube-system', '--no-headers'])).toMatch(
      /^proxy\s+3\s+\d+s\n$/,
    );
    expect(server.object('configmaps', 'kube-system', 'proxy')).toMatchObject({
      data: { 'config.conf': 'mode: nftables' },
      binaryData: { blob: 'AAEC' },
    });
    expect(await kubectl.ok(['delete', 'cm', 'proxy', '-n', 'kube-system'])).toBe(
      'configmap "proxy" deleted from kube-system namespace\n',
    );
  });

  it('refuses a bad key and more than 1 MiB, as the real server words it', async () => {
    // kubectl's own create configmap checks keys first, so the object comes from a file.
    const manifest = join(dir, 'bad-cm.yaml');
    writeFileSync(manifest, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad\ndata:\n  a b: "1"\n');
    const bad = await kubectl.run(['create', '-f', manifest]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain(
      `ConfigMap "bad" is invalid: data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
    );
    const file = join(dir, 'big.txt');
    writeFileSync(file, 'x'.repeat(1024 * 1024 + 1));
    const big = await kubectl.run(['create', 'configmap', 'big', `--from-file=big=${file}`]);
    expect(big.stderr).toContain('ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes');
    writeFileSync(
      manifest,
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frozen\nimmutable: true\ndata:\n  k: "1"\n',
    );
    await kubectl.ok(['create', '-f', manifest]);
    const frozen = await kubectl.run(['patch', 'cm', 'frozen', '-p', '{"data":{"k":"2"}}']);
    expect(frozen.stderr).toContain(
      'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    );
    const name = await kubectl.run(['create', 'configmap', 'Bad_Name']);
    expect(name.stderr).toContain(
      'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain',
    );
  });

  it('watches one object by fieldSelector metadata.name in its namespace, as the kubelet does', async () => {
    await kubectl.ok(['create', 'configmap', 'watched', '--from-literal=k=1']);
    await kubectl.ok(['create', 'configmap', 'other', '--from-literal=k=1']);
    const w = kubectl.start([
      'get',
      'cm',
      '-n',
      'default',
      '--field-selector',
      'metadata.name=watched',
      '-w',
      '--output-watch-events',
      '--no-headers',
    ]);
    try {
      await waitFor(() => /ADDED\s+watched/.test(w.stdout), { timeoutMs: 20_000, what: 'initial ADDED' });
      await kubectl.ok(['patch', 'cm', 'other', '-p', '{"data":{"k":"2"}}']);
      await kubectl.ok(['patch', 'cm', 'watched', '-p', '{"data":{"k":"2"}}']);
      await waitFor(() => /MODIFIED\s+watched/.test(w.stdout), { timeoutMs: 20_000, what: 'MODIFIED' });
      await kubectl.ok(['delete', 'cm', 'watched']);
      await waitFor(() => /DELETED\s+watched/.test(w.stdout), { timeoutMs: 20_000, what: 'DELETED' });
      expect(w.stdout).not.toContain('other');
    } finally {
      await w.stop();
    }
    const listed = await kubectl.ok([
      'get',
      'cm',
      '-A',
      '--field-selector',
      'metadata.namespace=kube-public',
      '-o',
      'name',
    ]);
    expect(listed).toBe('configmap/kube-root-ca.crt\n');
  });
});

describe('Secrets', () => {
  it('stores data base64, folds stringData into data, defaults the type, and prints TYPE and DATA', async () => {
    expect(
      await kubectl.ok([
        'create',
        'secret',
        'generic',
        'creds',
        '--from-literal=user=admin',
        '--from-literal=pass=s3cret',
      ]),
    ).toBe('secret/creds created\n');
    expect(server.object('secrets', 'default', 'creds')).toMatchObject({
      type: 'Opaque',
      data: { user: 'YWRtaW4=', pass: 'czNjcmV0' },
    });
    const file = join(dir, 'secret.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: mixed\nstringData:\n  token: plain\ndata:\n  token: b3Zlcndyb3Rl\n  other: b3RoZXI=\n',
    );
    await kubectl.ok(['create', '-f', file]);
    const stored = server.object('secrets', 'default', 'mixed');
    expect(stored?.data).toEqual({ token: Buffer.from('plain').toString('base64'), other: 'b3RoZXI=' });
    expect(stored?.stringData).toBeUndefined();
    expect(stored?.type).toBe('Opaque');
    await kubectl.ok([
      'create',
      'secret',
      'docker-registry',
      'pull',
      '--docker-server=registry.example:5000',
      '--docker-username=u',
      '--docker-password=p',
    ]);
    const out = await kubectl.ok(['get', 'secrets']);
    expect(out).toMatch(/^NAME\s+TYPE\s+DATA\s+AGE\n/);
    expect(out).toMatch(/^creds\s+Opaque\s+2\s+\d+s$/m);
    expect(out).toMatch(/^pull\s+kubernetes\.io\/dockerconfigjson\s+1\s+\d+s$/m);
    await kubectl.ok(['patch', 'secret', 'creds', '-p', '{"stringData":{"pass":"new"}}']);
    expect(server.object('secrets', 'default', 'creds')?.data).toEqual({
      user: 'YWRtaW4=',
      pass: Buffer.from('new').toString('base64'),
    });
  });

  it('refuses bad base64, a bad key, a changed type, and a TLS secret without its keys', async () => {
    const file = join(dir, 'bad-secret.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: badb64\ndata:\n  k: "not base64!"\n');
    const b64 = await kubectl.run(['create', '-f', file]);
    expect(b64.stderr).toContain('illegal base64 data at input byte');
    writeFileSync(file, 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: badkey\nstringData:\n  ..x: "1"\n');
    const key = await kubectl.run(['create', '-f', file]);
    expect(key.stderr).toContain(
      `Secret "badkey" is invalid: data[..x]: Invalid value: "..x": must not start with '..'`,
    );
    const type = await kubectl.run(['patch', 'secret', 'creds', '-p', '{"type":"kubernetes.io/tls"}']);
    expect(type.stderr).toContain('The Secret "creds" is invalid');
    expect(type.stderr).toContain('type: Invalid value: "kubernetes.io/tls": field is immutable');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Secret\nmetadata:\n  name: tls\ntype: kubernetes.io/tls\ndata:\n  tls.crt: eA==\n',
    );
    const tls = await kubectl.run(['create', '-f', file]);
    expect(tls.stderr).toContain('Secret "tls" is invalid: data[tls.key]: Required value');
  });
});

describe('Services and ServiceAccounts', () => {
  it('allocates a ClusterIP and node ports, prints them, keeps them over an update without them', async () => {
    expect(await kubectl.ok(['create', 'service', 'clusterip', 'dns', '-n', 'kube-system', '--tcp=53:53'])).toBe(
      'service/dns created\n',
    );
    const ip = String(server.object('services', 'kube-system', 'dns')?.spec?.['clusterIP' as never]);
    expect(ip).toMatch(/^10\.(9[6-9]|10\d|11[01])\.\d+\.\d+$/);
    expect(await kubectl.ok(['get', 'svc', 'dns', '-n', 'kube-system', '-o', 'wide', '--no-headers'])).toMatch(
      new RegExp(`^dns\\s+ClusterIP\\s+${ip.replace(/\./g, '\\.')}\\s+<none>\\s+53/TCP\\s+\\d+s\\s+app=dns\\n$`),
    );
    await kubectl.ok(['create', 'service', 'nodeport', 'web', '--tcp=80:8080']);
    const web = server.object('services', 'default', 'web')?.spec as {
      ports: { nodePort: number; targetPort: number }[];
    };
    expect(web.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
    expect(web.ports[0].targetPort).toBe(8080);
    expect(await kubectl.ok(['get', 'svc', 'web', '--no-headers'])).toMatch(
      new RegExp(`^web\\s+NodePort\\s+\\S+\\s+<none>\\s+80:${web.ports[0].nodePort}/TCP\\s+\\d+s\\n$`),
    );
    const json = JSON.parse(await kubectl.ok(['get', 'svc', 'dns', '-n', 'kube-system', '-o', 'json'])) as {
      spec: Record<string, unknown>;
    };
    delete json.spec.clusterIP;
    delete json.spec.clusterIPs;
    json.spec.ports = [{ name: 'dns', port: 53, protocol: 'UDP' }];
    await kubectl.ok(['replace', '-f', '-'], 60_000, JSON.stringify(json));
    expect(server.object('services', 'kube-system', 'dns')?.spec).toMatchObject({
      clusterIP: ip,
      ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 }],
    });
    const taken = await kubectl.run(['create', 'service', 'clusterip', 'clash', '--tcp=1:1', '--clusterip=10.96.0.1']);
    expect(taken.stderr).toContain(
      'Service "clash" is invalid: spec.clusterIPs[0]: Invalid value: "10.96.0.1": failed to allocate IP 10.96.0.1: provided IP is already allocated',
    );
    const name = await kubectl.run(['create', 'service', 'clusterip', '1bad', '--tcp=1:1']);
    expect(name.stderr).toContain(
      'Service "1bad" is invalid: metadata.name: Invalid value: "1bad": a DNS-1035 label must consist of lower case alphanumeric characters',
    );
    expect(await kubectl.ok(['delete', 'svc', 'web'])).toBe('service "web" deleted from default namespace\n');
  });

  it('creates, lists and deletes ServiceAccounts', async () => {
    expect(await kubectl.ok(['create', 'serviceaccount', 'kube-proxy', '-n', 'kube-system'])).toBe(
      'serviceaccount/kube-proxy created\n',
    );
    expect(await kubectl.ok(['get', 'sa', '-n', 'kube-system'])).toMatch(
      /^NAME\s+SECRETS\s+AGE\ndefault\s+0\s+\d+s\nkube-proxy\s+0\s+\d+s\n$/,
    );
    expect(await kubectl.ok(['delete', 'sa', 'kube-proxy', '-n', 'kube-system'])).toBe(
      'serviceaccount "kube-proxy" deleted from kube-system namespace\n',
    );
  });
});

// The rest of a control-plane node (issue 17's acceptance), all pieces together: the packaged agent,
// a real containerd on a pod network (Debian's CNI plugins inside a network namespace this file
// makes), the fake API server with ServiceAccount admission and TokenRequest, and real kubectl
// writing the pods as kubeadm's addon phase, flannel's manifest, the DaemonSet/ReplicaSet
// controllers and the admission would (busybox stands in for each image; volumes, env, security
// contexts and probes are theirs):
// - kube-proxy: host network, its ConfigMap, the xtables lock and /lib/modules hostPaths, the
//   kube-api-access projected token (issued by TokenRequest, renewed before it expires);
// - flannel: init containers copying into hostPaths (tmp dirs standing in for /etc/cni/net.d and
//   /opt/cni/bin), POD_NAME/POD_NAMESPACE from the downward API, its ConfigMap;
// - CoreDNS: on the pod network with an IP from the Node's podCIDR, its Corefile ConfigMap, the
//   readiness probe answered, a read-only root and every capability but NET_BIND_SERVICE dropped.
// A ConfigMap patch and a `kubectl edit` reach the container's file within 2 s; `kubectl delete pod`
// stops a pod within its grace period and the object goes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { createNetns, type TestNetns } from '../../../dev/netns.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { mountsUnder, unmountAllUnder } from '../../support/mounts.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'addons-e2e';
const POD_CIDR = '10.244.9.0/24';
const SA_MOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
/** What the tokens are capped to (--service-account-max-token-expiration): renewal at 80 % comes in the test's time. */
const TOKEN_SECONDS = 20;
const PROXY = 'kube-proxy-7k2xq';
const FLANNEL = 'kube-flannel-ds-z8m4c';
const COREDNS = 'coredns-668d6bf9bc-p4w9x';

let ns: TestNetns | undefined;
const netns = (): TestNetns => {
  if (!ns) throw new Error('the network namespace is not made');
  return ns;
};
// Registered before the harness's hooks: made before its containerd starts, removed after it stopped.
beforeAll(async () => {
  ns = await createNetns();
});
afterAll(async () => {
  await ns?.remove();
});

const h = useAgentHarness('addons', NODE, {}, () => ({ podNetwork: { netnsPath: netns().path } }));
let api: FakeApiServer;
let kubectl: Kubectl;
/** Host dirs standing in for /etc/cni/net.d, /opt/cni/bin and /run/flannel. */
let cniConfDir: string;
let cniBinDir: string;
let flannelRunDir: string;

const KUBE_PROXY_CONFIG =
  'apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\nmode: iptables\n';
const CNI_CONF =
  '{\n  "name": "cbr0",\n  "cniVersion": "0.3.1",\n  "plugins": [\n    {"type": "flannel", "delegate": {"hairpinMode": true, "isDefaultGateway": true}},\n    {"type": "portmap", "capabilities": {"portMappings": true}}\n  ]\n}\n';
const NET_CONF = '{\n  "Network": "10.244.0.0/16",\n  "EnableNFTables": false,\n  "Backend": {"Type": "vxlan"}\n}\n';
const COREFILE =
  '.:53 {\n    errors\n    health {\n       lameduck 5s\n    }\n    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n       fallthrough in-addr.arpa ip6.arpa\n       ttl 30\n    }\n    forward . /etc/resolv.conf\n    cache 30\n    loop\n    reload\n    loadbalance\n}\n';

const owner = (kind: string, name: string, uid: string) => [
  { apiVersion: 'apps/v1', kind, name, uid, controller: true, blockOwnerDeletion: true },
];
const forever = "trap 'exit 0' TERM; while true; do sleep 1; done";

/** kubeadm's kube-proxy DaemonSet pod; the container shows its config and token, and then idles. */
function kubeProxyPod(ownerUid: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: PROXY,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-proxy', 'controller-revision-hash': '6b9c8d7f5', 'pod-template-generation': '1' },
      ownerReferences: owner('DaemonSet', 'kube-proxy', ownerUid),
    },
    spec: {
      nodeName: NODE,
      priorityClassName: 'system-node-critical',
      hostNetwork: true,
      serviceAccountName: 'kube-proxy',
      terminationGracePeriodSeconds: 30,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }, { operator: 'Exists' }],
      containers: [
        {
          name: 'kube-proxy',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: [
            'sh',
            '-c',
            `cat /var/lib/kube-proxy/config.conf; wc -c ${SA_MOUNT}/token; echo "hostname-override=$NODE_NAME"; ${forever}`,
          ],
          securityContext: { privileged: true },
          env: [{ name: 'NODE_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'spec.nodeName' } } }],
          volumeMounts: [
            { mountPath: '/var/lib/kube-proxy', name: 'kube-proxy' },
            { mountPath: '/run/xtables.lock', name: 'xtables-lock', readOnly: false },
            { mountPath: '/lib/modules', name: 'lib-modules', readOnly: true },
          ],
        },
      ],
      volumes: [
        { name: 'kube-proxy', configMap: { name: 'kube-proxy', defaultMode: 420 } },
        { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' } },
        { name: 'lib-modules', hostPath: { path: '/lib/modules', type: '' } },
      ],
    },
  };
}

/** flannel's DaemonSet pod (kube-flannel.yml), its hostPaths moved under the test's dir. */
function flannelPod(ownerUid: string): Pod {
  const mounts = {
    cni: { name: 'cni', mountPath: '/etc/cni/net.d' },
    cfg: { name: 'flannel-cfg', mountPath: '/etc/kube-flannel/' },
  };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: FLANNEL,
      namespace: 'kube-flannel',
      labels: { app: 'flannel', tier: 'node', 'k8s-app': 'flannel' },
      ownerReferences: owner('DaemonSet', 'kube-flannel-ds', ownerUid),
    },
    spec: {
      nodeName: NODE,
      priorityClassName: 'system-node-critical',
      hostNetwork: true,
      serviceAccountName: 'flannel',
      terminationGracePeriodSeconds: 30,
      tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }],
      initContainers: [
        {
          name: 'install-cni-plugin',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          // flannel copies its /flannel binary; busybox stands in for it.
          command: ['cp'],
          args: ['-f', '/bin/busybox', '/opt/cni/bin/flannel'],
          volumeMounts: [{ name: 'cni-plugin', mountPath: '/opt/cni/bin' }],
        },
        {
          name: 'install-cni',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['cp'],
          args: ['-f', '/etc/kube-flannel/cni-conf.json', '/etc/cni/net.d/10-flannel.conflist'],
          volumeMounts: [mounts.cni, mounts.cfg],
        },
      ],
      containers: [
        {
          name: 'kube-flannel',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          // flanneld --ip-masq --kube-subnet-mgr writes /run/flannel/subnet.env; this writes what it was given.
          command: [
            'sh',
            '-c',
            `{ echo "POD_NAME=$POD_NAME"; echo "POD_NAMESPACE=$POD_NAMESPACE"; echo "EVENT_QUEUE_DEPTH=$EVENT_QUEUE_DEPTH"; cat /etc/kube-flannel/net-conf.json; } > /run/flannel/subnet.env.tmp && mv /run/flannel/subnet.env.tmp /run/flannel/subnet.env; ${forever}`,
          ],
          resources: { requests: { cpu: '100m', memory: '50Mi' } },
          securityContext: { privileged: false, capabilities: { add: ['NET_ADMIN', 'NET_RAW'] } },
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
            { name: 'EVENT_QUEUE_DEPTH', value: '5000' },
          ],
          volumeMounts: [
            { name: 'run', mountPath: '/run/flannel' },
            mounts.cfg,
            { name: 'xtables-lock', mountPath: '/run/xtables.lock' },
          ],
        },
      ],
      volumes: [
        { name: 'run', hostPath: { path: flannelRunDir, type: '' } },
        { name: 'cni-plugin', hostPath: { path: cniBinDir, type: '' } },
        { name: 'cni', hostPath: { path: cniConfDir, type: '' } },
        { name: 'flannel-cfg', configMap: { name: 'kube-flannel-cfg', defaultMode: 420 } },
        { name: 'xtables-lock', hostPath: { path: '/run/xtables.lock', type: 'FileOrCreate' } },
      ],
    },
  };
}

/**
 * kubeadm's CoreDNS Deployment pod. busybox httpd answers the probes (8181 /ready, 8080 /health)
 * from /dev/shm (the root is read-only), and listens on :53 too, which needs NET_BIND_SERVICE.
 */
function corednsPod(ownerUid: string): Pod {
  const script = [
    'mkdir -p /dev/shm/www',
    'echo OK > /dev/shm/www/ready',
    'echo OK > /dev/shm/www/health',
    'httpd -p 8080 -h /dev/shm/www',
    'httpd -p 53 -h /dev/shm/www',
    'exec httpd -f -p 8181 -h /dev/shm/www',
  ].join(' && ');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: COREDNS,
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-dns', 'pod-template-hash': '668d6bf9bc' },
      ownerReferences: owner('ReplicaSet', 'coredns-668d6bf9bc', ownerUid),
    },
    spec: {
      nodeName: NODE,
      priorityClassName: 'system-cluster-critical',
      serviceAccountName: 'coredns',
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: 30,
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      tolerations: [
        { key: 'CriticalAddonsOnly', operator: 'Exists' },
        { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
      ],
      containers: [
        {
          name: 'coredns',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          args: ['-conf', '/etc/coredns/Corefile'],
          resources: { limits: { memory: '170Mi' }, requests: { cpu: '100m', memory: '70Mi' } },
          volumeMounts: [{ name: 'config-volume', mountPath: '/etc/coredns', readOnly: true }],
          ports: [
            { containerPort: 53, name: 'dns', protocol: 'UDP' },
            { containerPort: 53, name: 'dns-tcp', protocol: 'TCP' },
            { containerPort: 9153, name: 'metrics', protocol: 'TCP' },
            { containerPort: 8080, name: 'liveness-probe', protocol: 'TCP' },
            { containerPort: 8181, name: 'readiness-probe', protocol: 'TCP' },
          ],
          livenessProbe: {
            httpGet: { path: '/health', port: 'liveness-probe', scheme: 'HTTP' },
            initialDelaySeconds: 60,
            timeoutSeconds: 5,
            successThreshold: 1,
            failureThreshold: 5,
          },
          readinessProbe: {
            httpGet: { path: '/ready', port: 'readiness-probe', scheme: 'HTTP' },
            periodSeconds: 1,
            timeoutSeconds: 1,
            successThreshold: 1,
            failureThreshold: 3,
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
            readOnlyRootFilesystem: true,
          },
        },
      ],
      volumes: [
        {
          name: 'config-volume',
          configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }], defaultMode: 420 },
        },
      ],
    },
  };
}

async function runtimePod(namespace: string, name: string): Promise<RuntimePod | undefined> {
  const runtime = h.cri().runtime;
  const listed = [...(await listRuntimePods(runtime)).values()].filter(
    (p) => p.name === name && p.namespace === namespace,
  );
  const full = await Promise.all(listed.map((p) => readRuntimePod(runtime, p.uid)));
  expect(full.filter(Boolean).length).toBeLessThanOrEqual(1);
  return full.find((p): p is RuntimePod => p !== undefined);
}

const runningContainer = (p: RuntimePod | undefined, name: string) =>
  p?.containers.find((c) => c.name === name && c.state === ContainerState.CONTAINER_RUNNING);
const apiPod = (namespace: string, name: string) => api.pod(namespace, name);
const uidOf = (namespace: string, name: string): string => apiPod(namespace, name)!.metadata!.uid!;

async function containerId(namespace: string, pod: string, container: string): Promise<string> {
  return waitFor(async () => runningContainer(await runtimePod(namespace, pod), container)?.id, {
    timeoutMs: 60_000,
    what: `${namespace}/${pod} ${container} running`,
  });
}

/** Runs a command in the container through the runtime: what the container itself sees. */
async function inContainer(id: string, script: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const r = await h.cri().runtime.execSync(id, ['sh', '-c', script], 10);
  return { exitCode: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
async function catInContainer(id: string, file: string): Promise<string> {
  const r = await inContainer(id, `cat ${file}`);
  if (r.exitCode !== 0) throw new Error(`cat ${file} in ${id}: exit ${r.exitCode}: ${r.stderr}`);
  return r.stdout;
}

/** Until the API pod says Running (and Ready, when asked). */
function waitRunning(namespace: string, name: string, ready = false): Promise<Pod> {
  return waitFor(
    () => {
      const p = apiPod(namespace, name);
      const isReady = p?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      return p?.status?.phase === 'Running' && (!ready || isReady) ? p : undefined;
    },
    { timeoutMs: 60_000, what: `${namespace}/${name} Running${ready ? ' and Ready' : ''} in the API` },
  );
}

/** When the ConfigMap's change was stored in the API server (its MODIFIED event), then until the container's file has `expected`. */
async function timeToContainer(
  id: string,
  file: string,
  namespace: string,
  name: string,
  change: () => Promise<unknown>,
  expected: string,
): Promise<number> {
  let storedAt = 0;
  const unsubscribe = api.store.subscribe((ev) => {
    const o = ev.object as { kind?: string; metadata?: { name?: string; namespace?: string } };
    if (ev.type === 'MODIFIED' && o.metadata?.name === name && o.metadata.namespace === namespace && storedAt === 0)
      storedAt = Date.now();
  });
  try {
    await change();
    await waitFor(async () => (await catInContainer(id, file)).includes(expected), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: `${file} changed in the container`,
    });
  } finally {
    unsubscribe();
  }
  expect(storedAt).toBeGreaterThan(0);
  return Date.now() - storedAt;
}

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  cniConfDir = path.join(h.dir, 'host', 'etc-cni-net.d');
  cniBinDir = path.join(h.dir, 'host', 'opt-cni-bin');
  flannelRunDir = path.join(h.dir, 'host', 'run-flannel');
  for (const d of [cniConfDir, cniBinDir, flannelRunDir]) fs.mkdirSync(d, { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  api.serviceAccountAdmission(true);
  api.configureTokens({ maxExpirationSeconds: TOKEN_SECONDS });
  await netns().forwardPort(api.port);
  const nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), `system:node:${NODE}`, [
    'system:nodes',
  ]);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  h.launch({
    wrap: netns().wrap,
    extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`, '--node-status-update-frequency=2s'],
  });
  // What kubeadm's addon phase and flannel's manifest apply before their workloads.
  await kubectl.ok(['create', 'namespace', 'kube-flannel']);
  await kubectl.ok(['create', 'serviceaccount', '-n', 'kube-system', 'kube-proxy']);
  await kubectl.ok(['create', 'serviceaccount', '-n', 'kube-system', 'coredns']);
  await kubectl.ok(['create', 'serviceaccount', '-n', 'kube-flannel', 'flannel']);
  const configMaps = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-proxy', namespace: 'kube-system', labels: { app: 'kube-proxy' } },
      data: {
        'config.conf': KUBE_PROXY_CONFIG,
        'kubeconfig.conf': `apiVersion: v1\nkind: Config\nusers:\n- name: default\n  user:\n    tokenFile: ${SA_MOUNT}/token\n`,
      },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kube-flannel-cfg', namespace: 'kube-flannel', labels: { app: 'flannel', tier: 'node' } },
      data: { 'cni-conf.json': CNI_CONF, 'net-conf.json': NET_CONF },
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'coredns', namespace: 'kube-system' },
      data: { Corefile: COREFILE },
    },
  ];
  for (const cm of configMaps) await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(cm));
  // kubeadm's kube-dns Service: pods of kube-system created after it get its service variables.
  await kubectl.ok(
    ['create', '-f', '-'],
    60_000,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'kube-dns',
        namespace: 'kube-system',
        labels: { 'k8s-app': 'kube-dns', 'kubernetes.io/cluster-service': 'true', 'kubernetes.io/name': 'CoreDNS' },
      },
      spec: {
        clusterIP: '10.96.0.10',
        selector: { 'k8s-app': 'kube-dns' },
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
          { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 9153 },
        ],
      },
    }),
  );
  await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
  // As kube-controller-manager's node IPAM allocates it.
  await kubectl.ok([
    'patch',
    'node',
    NODE,
    '--type=merge',
    '-p',
    JSON.stringify({ spec: { podCIDR: POD_CIDR, podCIDRs: [POD_CIDR] } }),
  ]);
});

// Runs before the harness stops the agent: the pods left are deleted, so that the agent unmounts
// their volumes (the projected ones are tmpfs); whatever a red test leaves mounted is unmounted.
afterAll(async () => {
  if (process.env.SHOW_AGENT_LOG)
    console.log(
      h
        .agent()
        .lines.filter((l) => !l.includes('"severity":"debug"'))
        .join('\n'),
    );
  try {
    await kubectl?.run(['delete', 'pod', '-n', 'kube-system', '--all', '--wait', '--timeout=20s'], 30_000);
    await kubectl?.run(['delete', 'pod', '-n', 'kube-flannel', '--all', '--wait', '--timeout=20s'], 30_000);
    await h.agent().kill('SIGKILL');
  } catch (e) {
    console.log(`cleanup: ${String(e)}`);
  } finally {
    unmountAllUnder(h.rootDir);
    await api?.dispose();
  }
});

describe('the addon pods of a kubeadm control-plane node', () => {
  it('kube-proxy, flannel and CoreDNS, bound to the node, run and are Running in the API (CoreDNS Ready with a pod IP)', async () => {
    const t0 = Date.now();
    const nodeUid = api.object('nodes', '', NODE)!.metadata.uid as string;
    // The fake has no controllers: a live object owns the pods so that its GC leaves them be.
    for (const pod of [kubeProxyPod(nodeUid), flannelPod(nodeUid), corednsPod(nodeUid)])
      await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(pod));
    // The ServiceAccount admission added the kube-api-access volume to each.
    for (const [n, name] of [
      ['kube-system', PROXY],
      ['kube-flannel', FLANNEL],
      ['kube-system', COREDNS],
    ] as const) {
      expect(apiPod(n, name)!.spec!.volumes!.some((v) => v.name.startsWith('kube-api-access-') && v.projected)).toBe(
        true,
      );
    }
    await Promise.all([
      waitRunning('kube-system', PROXY),
      waitRunning('kube-flannel', FLANNEL),
      waitRunning('kube-system', COREDNS, true),
    ]);
    console.log(`three addon pods created → all Running (CoreDNS Ready) in the API: ${Date.now() - t0} ms`);

    // kube-proxy: host network, its config, the node name, the hostPaths.
    const proxy = apiPod('kube-system', PROXY)!;
    expect(proxy.status!.podIP).toBe(proxy.status!.hostIP);
    const proxyId = await containerId('kube-system', PROXY, 'kube-proxy');
    expect(await catInContainer(proxyId, '/var/lib/kube-proxy/config.conf')).toBe(KUBE_PROXY_CONFIG);
    expect((await inContainer(proxyId, 'echo $NODE_NAME; test -f /run/xtables.lock && echo lock')).stdout).toBe(
      `${NODE}\nlock\n`,
    );
    // The host's /lib/modules, read-only.
    expect((await inContainer(proxyId, 'ls -A /lib/modules')).stdout.split('\n').filter(Boolean)).toEqual(
      fs.readdirSync('/lib/modules').sort(),
    );
    expect(fs.statSync('/run/xtables.lock').isFile()).toBe(true);
    expect((await inContainer(proxyId, 'touch /lib/modules/x')).exitCode).not.toBe(0);
    // What it printed at start (its container log): the config, the token's size, the node name.
    const proxyLog = fs.readFileSync(
      path.join(h.podLogsDir, `kube-system_${PROXY}_${proxy.metadata!.uid}`, 'kube-proxy', '0.log'),
      'utf8',
    );
    expect(proxyLog).toContain(' stdout F mode: iptables\n');
    expect(proxyLog).toMatch(new RegExp(` stdout F \\d+ ${SA_MOUNT}/token\n`));
    expect(proxyLog).toContain(` stdout F hostname-override=${NODE}\n`);
    // The token file as the kubelet writes kube-api-access: 0644 (defaultMode 420), behind ..data.
    expect((await inContainer(proxyId, `stat -c %a ${SA_MOUNT}/..data/token; readlink ${SA_MOUNT}/token`)).stdout).toBe(
      '644\n..data/token\n',
    );
    // The service variables: the kubernetes Service and kubeadm's kube-dns (enableServiceLinks).
    expect(
      (
        await inContainer(
          proxyId,
          'echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT $KUBE_DNS_SERVICE_HOST:$KUBE_DNS_SERVICE_PORT_DNS_TCP $KUBE_DNS_PORT',
        )
      ).stdout,
    ).toBe('10.96.0.1:443 10.96.0.10:53 udp://10.96.0.10:53\n');

    // flannel: its init containers ran first and filled the host's CNI dirs; the downward-API env.
    const flannel = apiPod('kube-flannel', FLANNEL)!;
    expect(flannel.status!.initContainerStatuses!.map((s) => [s.name, s.state?.terminated?.exitCode])).toEqual([
      ['install-cni-plugin', 0],
      ['install-cni', 0],
    ]);
    expect(fs.readFileSync(path.join(cniConfDir, '10-flannel.conflist'), 'utf8')).toBe(CNI_CONF);
    expect(fs.statSync(path.join(cniBinDir, 'flannel')).mode & 0o111).not.toBe(0);
    const subnetEnv = await waitFor(
      () =>
        fs.existsSync(path.join(flannelRunDir, 'subnet.env'))
          ? fs.readFileSync(path.join(flannelRunDir, 'subnet.env'), 'utf8')
          : undefined,
      { timeoutMs: 10_000, what: 'subnet.env' },
    );
    expect(subnetEnv).toBe(`POD_NAME=${FLANNEL}\nPOD_NAMESPACE=kube-flannel\nEVENT_QUEUE_DEPTH=5000\n${NET_CONF}`);

    // CoreDNS: a pod IP from the podCIDR (not the bridge's), its Corefile, read-only root, one capability.
    const dns = apiPod('kube-system', COREDNS)!;
    const ip = dns.status!.podIP!;
    expect(ip).toMatch(/^10\.244\.9\.\d+$/);
    expect(ip).not.toBe('10.244.9.1');
    expect(dns.status!.podIPs).toEqual([{ ip }]);
    expect(dns.status!.containerStatuses![0]).toMatchObject({ name: 'coredns', ready: true, restartCount: 0 });
    const dnsRt = await runtimePod('kube-system', COREDNS);
    expect(dnsRt!.sandboxes[0]!.ip).toBe(ip);
    const dnsId = await containerId('kube-system', COREDNS, 'coredns');
    expect(await catInContainer(dnsId, '/etc/coredns/Corefile')).toBe(COREFILE);
    expect(
      (
        await inContainer(
          dnsId,
          'ls /etc/coredns; readlink /etc/coredns/Corefile; stat -c %a /etc/coredns/..data/Corefile',
        )
      ).stdout,
    ).toBe('Corefile\n..data/Corefile\n644\n');
    expect((await inContainer(dnsId, 'touch /rootfs-write')).exitCode).not.toBe(0);
    expect((await inContainer(dnsId, 'grep CapEff /proc/1/status')).stdout.trim()).toBe('CapEff:\t0000000000000400');
    // Its probe port answers on the pod IP, from the node (the test's network namespace).
    expect(
      (await netns().exec(['timeout', '5', 'busybox', 'wget', '-qO-', `http://${ip}:8181/ready`], 10_000)).trim(),
    ).toBe('OK');
    expect(
      (await netns().exec(['timeout', '5', 'busybox', 'wget', '-qO-', `http://${ip}:53/health`], 10_000)).trim(),
    ).toBe('OK');
  });

  it("a ConfigMap patch and a kubectl edit reach the containers' files within 2 s", async () => {
    const proxyId = await containerId('kube-system', PROXY, 'kube-proxy');
    const patched = KUBE_PROXY_CONFIG.replace('mode: iptables', 'mode: nftables');
    const patchMs = await timeToContainer(
      proxyId,
      '/var/lib/kube-proxy/config.conf',
      'kube-system',
      'kube-proxy',
      () =>
        kubectl.ok([
          'patch',
          'configmap',
          '-n',
          'kube-system',
          'kube-proxy',
          '--type=merge',
          '-p',
          JSON.stringify({ data: { 'config.conf': patched } }),
        ]),
      'mode: nftables',
    );
    expect(await catInContainer(proxyId, '/var/lib/kube-proxy/config.conf')).toBe(patched);

    // kubectl edit, its editor a sed script: the Corefile loses `loop`.
    const dnsId = await containerId('kube-system', COREDNS, 'coredns');
    const editor = path.join(h.dir, 'editor.sh');
    fs.writeFileSync(editor, '#!/bin/sh\nsed -i \'s/ttl 30/ttl 5/\' "$1"\n', { mode: 0o755 });
    const before = process.env.KUBE_EDITOR;
    process.env.KUBE_EDITOR = editor;
    let editMs: number;
    try {
      editMs = await timeToContainer(
        dnsId,
        '/etc/coredns/Corefile',
        'kube-system',
        'coredns',
        () => kubectl.ok(['edit', 'configmap', '-n', 'kube-system', 'coredns']),
        'ttl 5',
      );
    } finally {
      if (before === undefined) delete process.env.KUBE_EDITOR;
      else process.env.KUBE_EDITOR = before;
    }
    expect(await catInContainer(dnsId, '/etc/coredns/Corefile')).toBe(COREFILE.replace('ttl 30', 'ttl 5'));
    // A flannel ConfigMap change reaches its container too (a third pod, another namespace).
    const flannelId = await containerId('kube-flannel', FLANNEL, 'kube-flannel');
    const flannelMs = await timeToContainer(
      flannelId,
      '/etc/kube-flannel/net-conf.json',
      'kube-flannel',
      'kube-flannel-cfg',
      () =>
        kubectl.ok([
          'patch',
          'configmap',
          '-n',
          'kube-flannel',
          'kube-flannel-cfg',
          '--type=merge',
          '-p',
          JSON.stringify({ data: { 'net-conf.json': NET_CONF.replace('vxlan', 'host-gw') } }),
        ]),
      'host-gw',
    );
    console.log(
      `ConfigMap stored → visible in the container: kubectl patch (kube-proxy) ${patchMs} ms, kubectl edit (coredns) ${editMs} ms, kubectl patch (flannel) ${flannelMs} ms`,
    );
    expect(patchMs).toBeLessThan(2_000);
    expect(editMs).toBeLessThan(2_000);
    expect(flannelMs).toBeLessThan(2_000);
  });

  it('the token file holds a token TokenRequest issued for the pod, and it is renewed before it expires', async () => {
    const uid = uidOf('kube-system', PROXY);
    const proxyId = await containerId('kube-system', PROXY, 'kube-proxy');
    const first = api.issuedTokens(uid)[0]!;
    expect(first).toMatchObject({
      namespace: 'kube-system',
      serviceAccount: 'kube-proxy',
      podName: PROXY,
      podUid: uid,
      requestedBy: `system:node:${NODE}`,
      audiences: ['https://kubernetes.default.svc.cluster.local'],
      expirationSeconds: TOKEN_SECONDS,
    });
    // The next renewal, watched from before it comes: then how long until the container's file has it.
    const n = api.tokensIssued(uid);
    const renewed = await waitFor(() => api.issuedTokens(uid)[n], {
      timeoutMs: (TOKEN_SECONDS + 5) * 1000,
      intervalMs: 20,
      what: 'the token renewed',
    });
    await waitFor(async () => (await catInContainer(proxyId, `${SA_MOUNT}/token`)) === renewed.token, {
      timeoutMs: 5_000,
      intervalMs: 20,
      what: 'the renewed token in the file',
    });
    const inFileMs = Date.now() - renewed.issuedAt.getTime();
    const tokens = api.issuedTokens(uid);
    // Each was renewed before it expired, at 80 % of its life (less a jitter of up to 10 s) or sooner.
    const gaps = tokens.slice(1).map((t, i) => t.issuedAt.getTime() - tokens[i]!.issuedAt.getTime());
    for (const [i, t] of tokens.slice(1).entries()) {
      expect(t.issuedAt.getTime()).toBeLessThan(tokens[i]!.expiresAt.getTime());
      expect(t.podUid).toBe(uid);
    }
    for (const g of gaps) expect(g).toBeLessThanOrEqual(TOKEN_SECONDS * 0.8 * 1000 + 1_000);
    // The rest of kube-api-access: the cluster CA and the namespace.
    expect(await catInContainer(proxyId, `${SA_MOUNT}/namespace`)).toBe('kube-system');
    expect(await catInContainer(proxyId, `${SA_MOUNT}/ca.crt`)).toBe(
      (api.object('configmaps', 'kube-system', 'kube-root-ca.crt') as unknown as { data: { 'ca.crt': string } }).data[
        'ca.crt'
      ],
    );
    console.log(
      `tokens (${TOKEN_SECONDS} s, ${tokens.length} issued for kube-proxy) renewed after ${gaps.join(', ')} ms; a renewed token in the container's file ${inFileMs} ms after it was issued`,
    );
    expect(inFileMs).toBeLessThan(2_000);
  });

  it('kubectl delete pod stops it within its grace period, then the object is gone and its token is no longer renewed', async () => {
    const uid = uidOf('kube-system', PROXY);
    const t0 = Date.now();
    await kubectl.ok(['delete', 'pod', '-n', 'kube-system', PROXY], 60_000);
    const took = Date.now() - t0;
    console.log(`kubectl delete pod ${PROXY} (grace 30 s) returned after ${took} ms`);
    expect(took).toBeLessThan(30_000);
    expect(apiPod('kube-system', PROXY)).toBeUndefined();
    const rt = await runtimePod('kube-system', PROXY);
    expect(rt?.containers.every((c) => c.state !== ContainerState.CONTAINER_RUNNING) ?? true).toBe(true);
    // Its volumes were unmounted (the projected tmpfs too) and its directory removed before the final DELETE.
    expect(mountsUnder(h.rootDir).filter((m) => m.mountPoint.includes(uid))).toEqual([]);
    expect(fs.existsSync(path.join(h.rootDir, 'pods', uid))).toBe(false);
    const deletes = api.requests.filter(
      (r) =>
        r.method === 'DELETE' &&
        r.path === `/api/v1/namespaces/kube-system/pods/${PROXY}` &&
        r.user === `system:node:${NODE}`,
    );
    expect(deletes.map((r) => r.status)).toEqual([200]);
    // Its token is forgotten: none is issued for it once its last one would have been renewed, which
    // another pod's renewal past that time shows.
    const issued = api.tokensIssued(uid);
    const due = api.issuedTokens(uid).at(-1)!.issuedAt.getTime() + TOKEN_SECONDS * 0.8 * 1000;
    const others = [uidOf('kube-system', COREDNS), uidOf('kube-flannel', FLANNEL)];
    await waitFor(() => api.issuedTokens().some((t) => others.includes(t.podUid) && t.issuedAt.getTime() > due), {
      timeoutMs: (TOKEN_SECONDS + 5) * 1000,
      what: "another pod's token renewed after the deleted one was due",
    });
    expect(api.tokensIssued(uid)).toBe(issued);
    // One watch per referenced ConfigMap, as configMapAndSecretChangeDetectionStrategy Watch keeps them:
    // the deleted pod's own ConfigMap is no longer watched.
    const open = api.requests.filter(
      (r) => r.user === `system:node:${NODE}` && r.closedAt === undefined && /(^|&)watch=(true|1)/.test(r.query),
    );
    console.log(`the node's open watches: ${open.map((r) => `${r.path}?${decodeURIComponent(r.query)}`).join(' | ')}`);
    const configMapWatches = open
      .filter((r) => /\/configmaps$/.test(r.path))
      .map((r) => `${r.path.split('/')[4]}/${/metadata\.name=([^&]+)/.exec(decodeURIComponent(r.query))?.[1] ?? '*'}`)
      .sort();
    expect(configMapWatches).toEqual([
      'kube-flannel/kube-flannel-cfg',
      'kube-flannel/kube-root-ca.crt',
      'kube-system/coredns',
      'kube-system/kube-root-ca.crt',
    ]);
    // The others keep running.
    expect(apiPod('kube-system', COREDNS)?.status?.phase).toBe('Running');
    expect(apiPod('kube-flannel', FLANNEL)?.status?.phase).toBe('Running');
    expect(h.agent().lines.filter((l) => l.includes('"severity":"error"'))).toEqual([]);
  });
});

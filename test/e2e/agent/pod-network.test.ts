// The pod network, through the runtime (issue 17 point 6), with the packaged agent, a real
// containerd running Debian's CNI plugins (bridge, host-local, portmap, loopback), the fake API
// server and real kubectl. containerd and the agent run inside a network namespace this file
// makes, so the bridge, the veths and the hostPort rules exist only there; the API server is
// reached through a unix-socket forward, never through an interface.
//
// containerd starts with only its conf_template: NetworkReady is false until the agent sends the
// Node's podCIDR with UpdateRuntimeConfig. Meanwhile the Node is not Ready (the kubelet's message),
// a host-network pod runs and a CoreDNS-like pod waits (NetworkNotReady). Once the Node has a
// podCIDR the CoreDNS-like pod runs with an IP from it, answers its readiness probe, and its
// hostPort reaches it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Node, Pod } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IMAGES } from '../../../dev/images.js';
import { createNetns, type TestNetns } from '../../../dev/netns.js';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { listRuntimePods, readRuntimePod, type RuntimePod } from '../../../src/kuberuntime/runtime-pods.js';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import { useAgentHarness } from './harness.js';

const NODE = 'pod-network-e2e';
const NODE_USER = `system:node:${NODE}`;
const POD_CIDR = '10.244.7.0/24';
const HOST_PORT = 5353;
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

const h = useAgentHarness('pod-network', NODE, {}, () => ({ podNetwork: { netnsPath: netns().path } }));
let api: FakeApiServer;
let kubectl: Kubectl;

const NETWORK_NOT_READY =
  'container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized';

/** kube-proxy's shape: host network, as the DaemonSet controller writes it. */
function proxyPod(ownerUid: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'proxy-x7k2p',
      namespace: 'kube-system',
      labels: { 'k8s-app': 'proxy' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: 'proxy',
          uid: ownerUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: NODE,
      hostNetwork: true,
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: 'main',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"],
        },
      ],
    },
  };
}

/**
 * CoreDNS's shape as kubeadm's Deployment and its ReplicaSet write it: the pod network, a read-only
 * root, every capability dropped but NET_BIND_SERVICE, a readiness httpGet probe. busybox httpd on
 * the DNS port stands in; it serves what the container saw: its POD_IP, /etc/hosts, its capabilities.
 */
function corednsPod(ownerUid: string): Pod {
  const script = [
    'mkdir -p /www/ready',
    'echo ok > /www/ready/index.html',
    'echo "$POD_IP" > /www/ip',
    'echo "$POD_IPS" > /www/ips',
    'cat /etc/hosts > /www/hosts',
    'grep CapEff /proc/self/status > /www/caps',
    'exec httpd -f -p 53 -h /www',
  ].join(' && ');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'coredns-7db6d8ff4d-q2x9z',
      namespace: 'kube-system',
      labels: { 'k8s-app': 'kube-dns' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'coredns-7db6d8ff4d',
          uid: ownerUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: NODE,
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: 2,
      priorityClassName: 'system-cluster-critical',
      containers: [
        {
          name: 'coredns',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', script],
          env: [
            { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
            { name: 'POD_IPS', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIPs' } } },
          ],
          ports: [
            { name: 'dns', containerPort: 53, protocol: 'UDP', hostPort: HOST_PORT },
            { name: 'dns-tcp', containerPort: 53, protocol: 'TCP', hostPort: HOST_PORT },
          ],
          readinessProbe: {
            httpGet: { path: '/ready/', port: 53, scheme: 'HTTP' },
            periodSeconds: 1,
            timeoutSeconds: 1,
            failureThreshold: 3,
            successThreshold: 1,
          },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] },
          },
          volumeMounts: [{ name: 'www', mountPath: '/www' }],
        },
      ],
      volumes: [{ name: 'www', emptyDir: {} }],
    },
  };
}

async function runtimePods(name: string): Promise<RuntimePod[]> {
  const runtime = h.cri().runtime;
  const listed = [...(await listRuntimePods(runtime)).values()].filter(
    (p) => p.name === name && p.namespace === 'kube-system',
  );
  const full = await Promise.all(listed.map((p) => readRuntimePod(runtime, p.uid)));
  return full.filter((p): p is RuntimePod => p !== undefined);
}

const running = (p: RuntimePod | undefined) => p?.containers.find((c) => c.state === ContainerState.CONTAINER_RUNNING);
const nodeReady = () =>
  (api.object('nodes', '', NODE) as unknown as Node | undefined)?.status?.conditions?.find((c) => c.type === 'Ready');
const apiPod = (name: string) => api.pod('kube-system', name);

/** `busybox wget` inside the test's namespace (busybox 1.35's own -T segfaults: timeout(1) bounds it). */
const fetchInside = (url: string): Promise<string> =>
  netns().exec(['timeout', '5', 'busybox', 'wget', '-qO-', url], 10_000);

beforeAll(async () => {
  fs.mkdirSync(path.join(h.dir, 'api'), { recursive: true });
  api = await startFakeApiServer({ dir: path.join(h.dir, 'api') });
  // The agent runs in the namespace, the fake API server in the test: the same port, forwarded.
  await netns().forwardPort(api.port);
  const nodeKubeconfig = api.writeKubeconfig(path.join(h.dir, 'node.kubeconfig'), NODE_USER, ['system:nodes']);
  kubectl = new Kubectl(api.writeAdminKubeconfig(path.join(h.dir, 'admin.kubeconfig')), h.dir);
  // Status rounds every 2 s (the kubelet's 10 s) so that the test waits less for each change.
  h.launch({
    wrap: netns().wrap,
    extraArgs: ['--v=2', `--kubeconfig=${nodeKubeconfig}`, '--node-status-update-frequency=2s'],
  });
});

afterAll(async () => {
  if (process.env.SHOW_AGENT_LOG) console.log(h.agent().lines.slice(-120).join('\n'));
  await api?.dispose();
});

describe('the pod network, through the runtime', () => {
  it("while the runtime network is not ready: the Node is not Ready with the kubelet's message, a host-network pod runs, a pod-network pod waits (NetworkNotReady)", async () => {
    await waitFor(() => api.object('nodes', '', NODE), { timeoutMs: 30_000, what: 'the Node registered' });
    const ready = await waitFor(() => (nodeReady()?.status === 'False' ? nodeReady() : undefined), {
      timeoutMs: 30_000,
      what: 'the Node not Ready',
    });
    expect(ready).toMatchObject({ status: 'False', reason: 'KubeletNotReady', message: NETWORK_NOT_READY });
    const owner = api.object('nodes', '', NODE)!.metadata.uid as string;
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(proxyPod(owner)));
    await kubectl.ok(['create', '-f', '-'], 60_000, JSON.stringify(corednsPod(owner)));
    await waitFor(async () => running((await runtimePods('proxy-x7k2p'))[0]), {
      timeoutMs: 60_000,
      what: 'the host-network pod running',
    });
    const uid = apiPod('coredns-7db6d8ff4d-q2x9z')!.metadata!.uid!;
    await h
      .agent()
      .waitForLog(
        (r) => r.msg === 'Pod waits for the runtime network' && r.podUID === uid,
        'the pod-network pod held',
        30_000,
      );
    const events = await waitFor(
      async () => {
        const all = JSON.parse(await kubectl.ok(['get', 'events', '-n', 'kube-system', '-o', 'json'])) as {
          items: { reason: string; type: string; message: string; involvedObject: { name: string } }[];
        };
        const held = all.items.filter(
          (e) => e.involvedObject.name === 'coredns-7db6d8ff4d-q2x9z' && e.reason === 'NetworkNotReady',
        );
        return held.length > 0 ? held : undefined;
      },
      { timeoutMs: 30_000, what: 'the NetworkNotReady event' },
    );
    expect(events[0]).toMatchObject({ type: 'Warning', message: `network is not ready: ${NETWORK_NOT_READY}` });
    expect(await runtimePods('coredns-7db6d8ff4d-q2x9z')).toEqual([]);
    expect(apiPod('coredns-7db6d8ff4d-q2x9z')?.status?.phase ?? 'Pending').toBe('Pending');
    // Every status round of this phase (2 s apart) read the Node from the agent's one watch of it, never with a GET
    // (issue 31: one GET per round while no pod CIDR was known and the network was not ready).
    const nodeRequests = api.requests.filter((r) => r.user === NODE_USER && r.path.startsWith('/api/v1/nodes'));
    expect(nodeRequests.filter((r) => r.method === 'GET' && r.path === `/api/v1/nodes/${NODE}`)).toEqual([]);
    expect(
      nodeRequests.filter(
        (r) =>
          r.method === 'GET' &&
          r.path === '/api/v1/nodes' &&
          new URLSearchParams(r.query).get('fieldSelector') === `metadata.name=${NODE}`,
      ).length,
    ).toBeGreaterThanOrEqual(2); // its LIST and its watch
  });

  it("the Node's podCIDR reaches the runtime: the CoreDNS-like pod runs on the bridge with an IP from it, gets Ready, and its hostPort reaches it", async () => {
    const t0 = Date.now();
    // As kube-controller-manager's node IPAM allocates it.
    await kubectl.ok(
      [
        'patch',
        'node',
        NODE,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { podCIDR: POD_CIDR, podCIDRs: [POD_CIDR] } }),
      ],
      60_000,
    );
    const updated = await h
      .agent()
      .waitForLog(
        (r) => r.msg === 'Updating Pod CIDR' && r.newPodCIDR === POD_CIDR,
        'the pod CIDR sent to the runtime',
        30_000,
      );
    // From the server's write to the runtime's answer: the watch's event, not the next status round.
    const patched = api.requests.find(
      (r) => r.method === 'PATCH' && r.path === `/api/v1/nodes/${NODE}` && r.user !== NODE_USER && r.status === 200,
    )!;
    const podCIDRMs = (updated.ts as number) * 1000 - (performance.timeOrigin + patched.receivedAt);
    console.log(`podCIDR written → UpdateRuntimeConfig done: ${podCIDRMs.toFixed(0)} ms`);
    expect(podCIDRMs).toBeLessThan(1000);
    await waitFor(() => nodeReady()?.status === 'True', { timeoutMs: 30_000, what: 'the Node Ready' });
    const readyAt = Date.now();
    const pod = await waitFor(
      () => {
        const p = apiPod('coredns-7db6d8ff4d-q2x9z');
        return p?.status?.phase === 'Running' &&
          p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? p
          : undefined;
      },
      { timeoutMs: 60_000, what: 'the CoreDNS-like pod Running and Ready in the API' },
    );
    console.log(`podCIDR set → Node Ready ${readyAt - t0} ms, → CoreDNS-like pod Ready ${Date.now() - t0} ms`);
    const ip = pod.status!.podIP!;
    expect(ip).toMatch(/^10\.244\.7\.\d+$/);
    expect(ip).not.toBe('10.244.7.1'); // the bridge's own address
    expect(pod.status!.podIPs).toEqual([{ ip }]);
    expect(pod.status!.hostIP).toBeTruthy();
    expect(pod.status!.containerStatuses?.[0]).toMatchObject({ ready: true, restartCount: 0 });
    // The sandbox is on the pod network: the runtime's own status says so.
    const rt = (await runtimePods('coredns-7db6d8ff4d-q2x9z'))[0]!;
    expect(rt.sandboxes[0]!.ip).toBe(ip);
    // What the container saw: its IP in the env and in the managed /etc/hosts, only NET_BIND_SERVICE.
    expect((await fetchInside(`http://${ip}:53/ip`)).trim()).toBe(ip);
    expect((await fetchInside(`http://${ip}:53/ips`)).trim()).toBe(ip);
    const hosts = await fetchInside(`http://${ip}:53/hosts`);
    expect(hosts).toMatch(/^# Kubernetes-managed hosts file\.\n127\.0\.0\.1\tlocalhost\n/);
    expect(hosts).toContain(`${ip}\tcoredns-7db6d8ff4d-q2x9z\n`);
    expect((await fetchInside(`http://${ip}:53/caps`)).trim()).toBe('CapEff:\t0000000000000400');
    // hostPort: the mapping reaches the pod, inside the namespace only (TCP and UDP both mapped).
    expect((await fetchInside(`http://127.0.0.1:${HOST_PORT}/ip`)).trim()).toBe(ip);
    const nat = await netns().exec(['iptables', '-t', 'nat', '-S']);
    expect(nat).toMatch(
      new RegExp(`-p tcp -m tcp --dport ${HOST_PORT} -j DNAT --to-destination ${ip.replace(/\./g, '\\.')}:53`),
    );
    expect(nat).toMatch(
      new RegExp(`-p udp -m udp --dport ${HOST_PORT} -j DNAT --to-destination ${ip.replace(/\./g, '\\.')}:53`),
    );
    expect(h.agent().lines.filter((l) => l.includes('"severity":"error"'))).toEqual([]);
  });
});

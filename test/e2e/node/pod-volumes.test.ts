// configMap, secret and projected token volumes through the pod operations and a real private
// containerd, fed by an in-test PodObjects: a container reads its configMap file and sees an edit
// within 2 s (the kubelet takes up to a minute); the secret is a tmpfs inside the container and on
// the host; removing the pod unmounts it before the pod dir goes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../../../dev/images.js';
import { connectRuntime, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import type { DefaultedPod } from '../../../src/k8s/pod.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import type { SandboxRef } from '../../../src/kuberuntime/pod-runtime.js';
import { parseMountInfo, tmpfsMountsUnder } from '../../../src/node/tmpfs-volumes.js';
import { FakePodObjects } from '../../support/fake-pod-objects.js';
import { unmountAllUnder } from '../../support/mounts.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

// Registered first so that it runs last, after containerd is stopped.
const tmp = useTmpDir('pod-volumes');
const rootDir = path.join(tmp, 'root');
const podLogsDir = path.join(tmp, 'logs');
const UID = 'e2evol00000000000000000000' + process.pid.toString(16).padStart(6, '0').slice(-6);
const NS = 'kube-system';

let cd: PrivateContainerd | undefined;
let cri: RuntimeConnection | undefined;
let pods: CriPodRuntime | undefined;
let sandbox: SandboxRef | undefined;
let containerId: string | undefined;
const objects = new FakePodObjects();
const { logger, lines } = memoryLogger(2);

const pod: DefaultedPod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'kube-proxy-abcde',
    namespace: NS,
    uid: UID,
    annotations: { 'kubernetes.io/config.source': 'api' },
  },
  spec: {
    hostNetwork: true,
    nodeName: 'node1',
    serviceAccountName: 'kube-proxy',
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 1,
    securityContext: {},
    containers: [
      {
        name: 'kube-proxy',
        image: TEST_IMAGES.busybox,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', "trap 'exit 0' TERM; sleep 100000 & wait"],
        volumeMounts: [
          { name: 'kube-proxy', mountPath: '/var/lib/kube-proxy' },
          { name: 'certs', mountPath: '/etc/certs' },
          { name: 'kube-api-access-x7k2p', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
        ],
      },
    ],
    volumes: [
      { name: 'kube-proxy', configMap: { name: 'kube-proxy' } },
      { name: 'certs', secret: { secretName: 'proxy-certs', defaultMode: 0o400 } },
      {
        name: 'kube-api-access-x7k2p',
        projected: {
          defaultMode: 0o644,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            {
              downwardAPI: {
                items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
              },
            },
          ],
        },
      },
    ],
  },
};

async function inContainer(script: string): Promise<string> {
  const r = await cri!.runtime.execSync(containerId!, ['sh', '-c', script], 10);
  if (r.exitCode !== 0) throw new Error(`exit ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

beforeAll(async () => {
  cd = await startContainerd({ name: 'pod-volumes' });
  await importTestImages(cd);
  cri = await connectRuntime(cd.endpoint);
  pods = new CriPodRuntime({
    runtime: cri.runtime,
    images: cri.images,
    rootDir,
    podLogsDir,
    nodeName: 'node1',
    nodeIP: '127.0.0.1',
    resolvConf: '',
    logger,
    podObjects: objects,
  });
  objects.setConfigMap(NS, 'kube-proxy', { 'config.conf': 'mode: iptables\n' });
  objects.setConfigMap(NS, 'kube-root-ca.crt', { 'ca.crt': 'CA PEM' });
  objects.setSecret(NS, 'proxy-certs', { 'tls.key': 'PRIVATE' });
});

afterAll(async () => {
  const rt = cri?.runtime;
  if (containerId) await rt?.removeContainer(containerId).catch(() => undefined);
  if (sandbox) {
    await rt?.stopPodSandbox(sandbox.id).catch(() => undefined);
    await rt?.removePodSandbox(sandbox.id).catch(() => undefined);
  }
  rt?.close();
  await cd?.stop();
  // Whatever a red test left mounted goes before the tmp dir does.
  unmountAllUnder(tmp);
});

describe('API-object volumes in a running container', () => {
  it('starts with the configMap, the secret and the kube-api-access files in place', async () => {
    sandbox = await pods!.createSandbox(pod, 0);
    const started = await pods!.startContainer(pod, sandbox, pod.spec!.containers[0]!, 'container', 0);
    containerId = started.id;
    expect(await inContainer('cat /var/lib/kube-proxy/config.conf')).toBe('mode: iptables\n');
    expect(await inContainer('cat /etc/certs/tls.key; stat -c %a /etc/certs/..data/tls.key')).toBe('PRIVATE400\n');
    const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
    expect(await inContainer(`cat ${sa}/token; echo; cat ${sa}/ca.crt; echo; cat ${sa}/namespace`)).toBe(
      `token-kube-proxy--3607-0\nCA PEM\n${NS}`,
    );
    expect(objects.tokenRequests[0]).toMatchObject({
      serviceAccountName: 'kube-proxy',
      expirationSeconds: 3607,
      pod: { metadata: { uid: UID } },
    });
    // Mounted read-only whatever the volumeMount says, as the kubelet does.
    expect(await inContainer('touch /var/lib/kube-proxy/x 2>&1 || echo refused')).toContain('refused');
  });

  it('the secret and the token are tmpfs mounts, inside the container and on the host; the configMap is not', async () => {
    const inside = await inContainer('cat /proc/self/mountinfo');
    const fsTypeAt = (mp: string) => parseMountInfo(inside).find((m) => m.mountPoint === mp)?.fsType;
    expect(fsTypeAt('/etc/certs')).toBe('tmpfs');
    expect(fsTypeAt('/var/run/secrets/kubernetes.io/serviceaccount')).toBe('tmpfs');
    expect(fsTypeAt('/var/lib/kube-proxy')).not.toBe('tmpfs');
    const host = await tmpfsMountsUnder(path.join(rootDir, 'pods', UID));
    expect(host.map((p) => path.basename(p)).sort()).toEqual(['certs', 'kube-api-access-x7k2p']);
  });

  it('a ConfigMap edit is in the container file within 2 s, through the same mount', async () => {
    const t0 = Date.now();
    objects.setConfigMap(NS, 'kube-proxy', { 'config.conf': 'mode: ipvs\n' });
    objects.changed(NS);
    await waitFor(async () => (await inContainer('cat /var/lib/kube-proxy/config.conf')) === 'mode: ipvs\n', {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: 'the edited config.conf in the container',
    });
    const took = Date.now() - t0;
    console.log(`ConfigMap change visible in the container after ${took} ms`);
    expect(took).toBeLessThan(2000);
    // A renewed token and an edited secret go the same way.
    objects.tokenSerial = 1;
    objects.setSecret(NS, 'proxy-certs', { 'tls.key': 'ROTATED' });
    objects.changed(NS);
    await waitFor(
      async () =>
        (await inContainer('cat /etc/certs/tls.key; cat /var/run/secrets/kubernetes.io/serviceaccount/token')) ===
        'ROTATEDtoken-kube-proxy--3607-1',
      { timeoutMs: 10_000, intervalMs: 20, what: 'the rotated secret and token in the container' },
    );
    expect(lines.filter((l) => l.includes('Volume update failed'))).toEqual([]);
  });

  it('cleanup unmounts the tmpfs volumes, then removes the pod dir', async () => {
    await cri!.runtime.stopContainer(containerId!, 2);
    await cri!.runtime.removeContainer(containerId!);
    containerId = undefined;
    await cri!.runtime.stopPodSandbox(sandbox!.id);
    await cri!.runtime.removePodSandbox(sandbox!.id);
    sandbox = undefined;
    await pods!.cleanupPod(UID, NS, pod.metadata.name);
    expect(fs.existsSync(path.join(rootDir, 'pods', UID))).toBe(false);
    expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(UID);
    expect(objects.unregistered).toContain(UID);
  });
});

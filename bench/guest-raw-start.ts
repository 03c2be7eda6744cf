// Runs inside the test node's guest (bench/guest.ts bundles it and a systemd unit starts it at boot,
// after containerd): the control plane's four static pods started by direct CRI calls, RunPodSandbox,
// CreateContainer and StartContainer, with the configs bootlet's own code builds (as bench/kubeadm.ts's
// raw round). What bootlet adds to a boot is measured against this. Prints one JSON line: the
// process's start, its first CRI call and the last StartContainer's return (ms since the epoch).
import { mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadManifest } from '../src/config/manifest.js';
import { connectRuntime } from '../src/cri/cri-client.js';
import { buildSandboxConfig } from '../src/kuberuntime/sandbox-config.js';
import { podLogDirectory } from '../src/node/pod-logs/layout.js';
import { prepareVolumes } from '../src/node/volumes.js';
import { hostContainerConfig } from '../test/support/host-container-config.js';

const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
const ENDPOINT = 'unix:///run/containerd/containerd.sock';
const POD_LOGS = '/var/log/pods';

const processStart = performance.timeOrigin;
const cri = await connectRuntime(ENDPOINT);
const resolvConf = readFileSync('/etc/resolv.conf', 'utf8');
const node = hostname();
const prepared = [];
for (const c of COMPONENTS) {
  const file = `/etc/kubernetes/manifests/${c}.yaml`;
  const loaded = loadManifest(file, readFileSync(file, 'utf8'), node, new Date());
  if ('error' in loaded) throw new Error(`${c}: ${loaded.error.message}`);
  const pod = loaded.pod.pod;
  const container = pod.spec!.containers[0]!;
  mkdirSync(`${podLogDirectory(POD_LOGS, pod)}/${container.name}`, { recursive: true });
  // The slice bootlet would give it under the systemd driver (all four are Burstable); runc's systemd
  // driver has systemd make it.
  const uid = pod.metadata.uid.replaceAll('-', '_');
  const cgroupParent = `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid}.slice`;
  const sandbox = buildSandboxConfig(pod, { podLogsDir: POD_LOGS, attempt: 0, resolvConf, cgroupParent });
  const mounts = await prepareVolumes(pod, container, { rootDir: '/var/lib/kubelet' });
  prepared.push({ pod, container, sandbox, mounts });
}
const firstCall = Date.now();
await Promise.all(
  prepared.map(async ({ pod, container, sandbox, mounts }) => {
    const imageRef = (await cri.images.imageStatus({ image: container.image! }))?.id;
    if (!imageRef) throw new Error(`${container.image} is not imported`);
    const sandboxId = await cri.runtime.runPodSandbox(sandbox);
    const config = hostContainerConfig(pod, container, { nodeName: node, imageRef, mounts });
    const id = await cri.runtime.createContainer(sandboxId, config, sandbox);
    await cri.runtime.startContainer(id);
  }),
);
const done = Date.now();
console.log(JSON.stringify({ processStart: Math.round(processStart), firstCall, done }));
cri.runtime.close();
process.exit(0);

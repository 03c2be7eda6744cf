// test/fixtures/kubelet/runtime-objects.json, typed: what a kubelet 1.34 writes on the CRI objects of
// the four kubeadm 1.34 static pods (node cp-1), and of one API pod (api-pod-runtime-objects.json).
// See test/fixtures/kubelet/README.md.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Pod } from 'kubernetes-types/core/v1';

export interface KubeletPodObjects {
  /** The kubeadm manifest, relative to test/fixtures/kubelet. */
  manifest: string;
  sandbox: {
    metadata: { name: string; namespace: string; uid: string; attempt: number };
    hostname: string;
    log_directory: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
  container: {
    metadata: { name: string; attempt: number };
    log_path: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
  };
}

export const KUBELET_NODE = 'cp-1';

export function kubeletRuntimeObjects(): KubeletPodObjects[] {
  const file = fileURLToPath(new URL('../fixtures/kubelet/runtime-objects.json', import.meta.url));
  return (JSON.parse(readFileSync(file, 'utf8')) as { pods: KubeletPodObjects[] }).pods;
}

/** The fixture's pod for a kubeadm component (etcd, kube-apiserver, ...). */
export function kubeletPodObjects(component: string): KubeletPodObjects {
  const p = kubeletRuntimeObjects().find((x) => x.manifest.endsWith(`/${component}.yaml`));
  if (!p) throw new Error(`no ${component} in runtime-objects.json`);
  return p;
}

/** The kubeadm 1.34 manifest the fixture's pod was made from. */
export function kubeadmManifest(component: string): { path: string; text: string } {
  const path = fileURLToPath(new URL(`../fixtures/kubeadm/1.34/manifests/${component}.yaml`, import.meta.url));
  return { path, text: readFileSync(path, 'utf8') };
}

/** test/fixtures/kubelet/api-pod-runtime-objects.json: a kube-proxy DaemonSet pod as a kubelet 1.34 runs it. */
export interface KubeletApiPodObjects extends Omit<KubeletPodObjects, 'manifest'> {
  /** The pod as the API server holds it. */
  pod: Pod;
}

export function kubeletApiPodObjects(): KubeletApiPodObjects {
  const file = fileURLToPath(new URL('../fixtures/kubelet/api-pod-runtime-objects.json', import.meta.url));
  return JSON.parse(readFileSync(file, 'utf8')) as KubeletApiPodObjects;
}

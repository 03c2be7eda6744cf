// Where the API server reaches a pod's node: the Node's InternalIP (kubeadm's preferred address
// type) and daemonEndpoints.kubeletEndpoint.Port, with the API server's own kubelet client
// certificate (kube-apiserver-kubelet-client). The kubelet's serving certificate is not verified
// unless a CA is given (kube-apiserver --kubelet-certificate-authority; kubeadm gives none).
import type { ObjectStore } from '../store.js';
import { badRequest, ApiError } from '../status.js';
import { arr, isObject, obj, str, type KObject } from '../types.js';

export interface KubeletClientTls {
  cert: string;
  key: string;
  /** Verify the kubelet's serving certificate against this CA (and its IP SAN). */
  ca?: string;
}

export interface NodeEndpoint {
  host: string;
  port: number;
}

export function podOf(store: ObjectStore, namespace: string, name: string): KObject {
  const pod = store.get('pods', namespace, name);
  if (!pod) throw new ApiError(404, 'NotFound', `pods "${name}" not found`, { name, kind: 'pods' });
  return pod;
}

export function nodeEndpoint(store: ObjectStore, pod: KObject): NodeEndpoint {
  const nodeName = str(obj(pod.spec).nodeName);
  if (!nodeName) throw badRequest(`pod ${str(pod.metadata.name)} does not have a host assigned`);
  const node = store.get('nodes', '', nodeName);
  if (!node) throw new ApiError(404, 'NotFound', `nodes "${nodeName}" not found`, { name: nodeName, kind: 'nodes' });
  const status = obj(node.status);
  const addr = arr(status.addresses).find((a) => isObject(a) && str(a.type) === 'InternalIP');
  const port = obj(obj(status.daemonEndpoints).kubeletEndpoint).Port;
  if (!isObject(addr) || typeof port !== 'number' || port <= 0)
    throw new ApiError(500, 'InternalError', `node ${nodeName} has no InternalIP or kubelet port`);
  return { host: str(addr.address), port };
}

/** The container a request means: the one named, or the only one (ValidateContainer). */
export function containerOf(pod: KObject, asked: string): string {
  const names = arr(obj(pod.spec).containers)
    .concat(arr(obj(pod.spec).initContainers))
    // Ephemeral containers too, as the real one's podutil.VisitContainers: kubectl debug attaches to one.
    .concat(arr(obj(pod.spec).ephemeralContainers))
    .map((c) => str(obj(c).name));
  const podName = str(pod.metadata.name);
  if (!asked) {
    const regular = arr(obj(pod.spec).containers).map((c) => str(obj(c).name));
    if (regular.length === 1) return regular[0]!;
    throw badRequest(`a container name must be specified for pod ${podName}, choose one of: [${regular.join(' ')}]`);
  }
  if (!names.includes(asked)) throw badRequest(`container ${asked} is not valid for pod ${podName}`);
  return asked;
}

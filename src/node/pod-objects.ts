// The API objects a pod refers to: the ConfigMaps and Secrets of its volumes and env, its service
// account token, and the Services its env links to. Declared here, where volumes (node) and env
// (kuberuntime) read them; the API side implements it (src/apiserver/pod-objects/), and the wiring
// hands it down. A static pod refers to none of these; an agent with no API server has none.
import type { ConfigMap, PodSpec, Secret, Service } from 'kubernetes-types/core/v1';

/** The pod as the managers key it: its references are read from its spec. */
export interface PodRef {
  readonly metadata: { readonly uid: string; readonly name: string; readonly namespace: string };
  readonly spec?: PodSpec;
}

/** Thrown when an object cannot be known yet (no server, not yet listed, a request failed); the caller retries. */
export class PodObjectUnavailableError extends Error {
  override name = 'PodObjectUnavailableError';
}

/** What TokenRequest returns for a projected serviceAccountToken. */
export interface ServiceAccountToken {
  readonly token: string;
  /** When the token stops being valid (status.expirationTimestamp). */
  readonly expiresAt: Date;
}

export interface TokenRequestFor {
  readonly pod: PodRef;
  readonly serviceAccountName: string;
  /** Empty: the API server's own audiences. */
  readonly audience?: string;
  readonly expirationSeconds: number;
}

export interface PodObjects {
  /** Start watching what the pod refers to (the kubelet's RegisterPod); a pod registered again replaces its references. */
  registerPod(pod: PodRef): void;
  /** Stop watching what only this pod referred to (UnregisterPod). */
  unregisterPod(podUid: string): void;
  /** The object, or undefined when the server says it does not exist. Throws PodObjectUnavailableError when it cannot be known. */
  getConfigMap(namespace: string, name: string): Promise<ConfigMap | undefined>;
  getSecret(namespace: string, name: string): Promise<Secret | undefined>;
  /** A token bound to the pod, renewed by the manager at 80 % of its life or after 24 h; the last good one while renewal fails and it is valid. */
  getServiceAccountToken(req: TokenRequestFor): Promise<ServiceAccountToken>;
  /** Services for the env's service links and KUBERNETES_SERVICE_*: the pod's namespace and `default`. */
  getServices(namespace: string): Promise<readonly Service[]>;
  /** A referenced object (or a token) changed: the UIDs of the registered pods that refer to it. */
  onChange(listener: (podUids: readonly string[]) => void): void;
}

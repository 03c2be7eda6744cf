// The PodObjects the wiring hands down at start, before the API side has a connection (a client
// certificate may still be bootstrapping): registrations are kept and handed to the connected
// objects once there are some, and reads until then say the objects cannot be known yet.
import type { ConfigMap, Secret, Service } from 'kubernetes-types/core/v1';
import {
  PodObjectUnavailableError,
  type PodObjects,
  type PodRef,
  type ServiceAccountToken,
  type TokenRequestFor,
} from '../../node/pod-objects.js';

/** What the connected objects add: they stop with their connection. */
export interface ConnectedPodObjects extends PodObjects {
  stop(): Promise<void>;
}

const notYet = (): Promise<never> =>
  Promise.reject(new PodObjectUnavailableError('no connection to the API server yet'));

export class DeferredPodObjects implements PodObjects {
  private readonly registered = new Map<string, PodRef>();
  private readonly listeners: ((podUids: readonly string[]) => void)[] = [];
  private connected: ConnectedPodObjects | undefined;

  /** The objects of the connection: every registered pod is registered there, every listener hears it. */
  attach(objects: ConnectedPodObjects): void {
    this.connected = objects;
    objects.onChange((uids) => {
      for (const l of this.listeners) l(uids);
    });
    for (const pod of this.registered.values()) objects.registerPod(pod);
  }

  /** The pods registered now, by UID. */
  registeredPods(): readonly string[] {
    return [...this.registered.keys()];
  }

  registerPod(pod: PodRef): void {
    this.registered.set(pod.metadata.uid, pod);
    this.connected?.registerPod(pod);
  }

  unregisterPod(podUid: string): void {
    if (!this.registered.delete(podUid)) return;
    this.connected?.unregisterPod(podUid);
  }

  getConfigMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    return this.connected?.getConfigMap(namespace, name) ?? notYet();
  }

  getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    return this.connected?.getSecret(namespace, name) ?? notYet();
  }

  getServiceAccountToken(req: TokenRequestFor): Promise<ServiceAccountToken> {
    return this.connected?.getServiceAccountToken(req) ?? notYet();
  }

  getServices(namespace: string): Promise<readonly Service[]> {
    return this.connected?.getServices(namespace) ?? notYet();
  }

  onChange(listener: (podUids: readonly string[]) => void): void {
    this.listeners.push(listener);
  }
}

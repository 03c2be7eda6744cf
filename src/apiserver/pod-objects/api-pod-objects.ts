// The API side's PodObjects (src/node/pod-objects.ts) on one connection: the ConfigMap and Secret
// managers (one watch per referenced object), the Services lister and the token manager, all on
// the one API client and gated by its Connectivity. Registering a pod is cheap (reference counts,
// a watch started for an object no other pod names); reads wait, bounded, for the first LIST.
import type { ConfigMap, Secret, Service } from 'kubernetes-types/core/v1';
import type { Logger } from '../../log/logger.js';
import type { PodObjects, PodRef, ServiceAccountToken, TokenRequestFor } from '../../node/pod-objects.js';
import type { PodObjectsClient, PodObjectsGate } from './client.js';
import { WatchBasedObjectManager } from './object-manager.js';
import { podConfigMapNames, podConfigMapVolumeNames, podSecretNames, podSecretVolumeNames } from './references.js';
import { ServiceLister } from './service-lister.js';
import { ServiceAccountTokenManager } from './token-manager.js';

/** How long a read waits for an object's first LIST (the kubelet waits 1 s, then the volume manager retries). */
export const POD_OBJECT_SYNC_TIMEOUT_MS = 3000;

export interface ApiPodObjectsOptions {
  readonly client: PodObjectsClient;
  readonly gate: PodObjectsGate;
  readonly logger: Logger;
  readonly syncTimeoutMs?: number;
  /** Watch length asked of the server, in seconds (default 5–10 min, randomized per watch). */
  readonly watchSeconds?: () => number;
  /** The token jitter's random source. */
  readonly random?: () => number;
  /** A ConfigMap or Secret watch no one read through for this long stops (object-manager.ts). */
  readonly maxIdleMs?: number;
  readonly now?: () => number;
}

export class ApiPodObjects implements PodObjects {
  private readonly listeners: ((podUids: readonly string[]) => void)[] = [];
  private readonly pods = new Set<string>();
  readonly configMaps: WatchBasedObjectManager<ConfigMap>;
  readonly secrets: WatchBasedObjectManager<Secret>;
  readonly services: ServiceLister;
  readonly tokens: ServiceAccountTokenManager;
  private stopped = false;

  constructor(opts: ApiPodObjectsOptions) {
    const logger = opts.logger.with({ component: 'pod-objects' });
    const syncTimeoutMs = opts.syncTimeoutMs ?? POD_OBJECT_SYNC_TIMEOUT_MS;
    const onChange = (uids: readonly string[]): void => this.tell(uids);
    const common = {
      client: opts.client,
      gate: opts.gate,
      logger,
      syncTimeoutMs,
      watchSeconds: opts.watchSeconds,
      onChange,
    };
    const idle = { maxIdleMs: opts.maxIdleMs, now: opts.now };
    this.configMaps = new WatchBasedObjectManager<ConfigMap>({
      ...common,
      ...idle,
      resource: 'configmaps',
      referencedNames: (p) => podConfigMapNames(p.spec),
      volumeNames: (p) => podConfigMapVolumeNames(p.spec),
    });
    this.secrets = new WatchBasedObjectManager<Secret>({
      ...common,
      ...idle,
      resource: 'secrets',
      referencedNames: (p) => podSecretNames(p.spec),
      volumeNames: (p) => podSecretVolumeNames(p.spec),
    });
    this.services = new ServiceLister(common);
    this.tokens = new ServiceAccountTokenManager({
      client: opts.client,
      gate: opts.gate,
      logger,
      onChange,
      random: opts.random,
      registered: (uid) => this.pods.has(uid),
    });
    // One listener for every watch and renewal: the gate's listeners are never removed.
    opts.gate.onUp(() => {
      if (this.stopped) return;
      this.configMaps.serverBack();
      this.secrets.serverBack();
      this.services.serverBack();
      this.tokens.serverBack();
    });
  }

  registerPod(pod: PodRef): void {
    if (this.stopped) return;
    this.pods.add(pod.metadata.uid);
    this.configMaps.registerPod(pod);
    this.secrets.registerPod(pod);
    this.services.start();
    this.tokens.podRegistered(pod.metadata.uid);
  }

  unregisterPod(podUid: string): void {
    this.pods.delete(podUid);
    this.configMaps.unregisterPod(podUid);
    this.secrets.unregisterPod(podUid);
    this.tokens.forgetPod(podUid);
  }

  getConfigMap(namespace: string, name: string): Promise<ConfigMap | undefined> {
    return this.configMaps.get(namespace, name);
  }

  getSecret(namespace: string, name: string): Promise<Secret | undefined> {
    return this.secrets.get(namespace, name);
  }

  getServiceAccountToken(req: TokenRequestFor): Promise<ServiceAccountToken> {
    return this.tokens.get(req);
  }

  getServices(namespace: string): Promise<readonly Service[]> {
    return this.services.list(namespace);
  }

  onChange(listener: (podUids: readonly string[]) => void): void {
    this.listeners.push(listener);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.tokens.stop();
    await Promise.all([this.configMaps.stop(), this.secrets.stop(), this.services.stop()]);
  }

  private tell(uids: readonly string[]): void {
    if (this.stopped) return;
    for (const l of this.listeners) l(uids);
  }
}

// The objects a fresh cluster's controllers keep in place: the `kubernetes` Service in `default`
// (the API server's own endpoint reconciler), the `default` ServiceAccount of every namespace (the
// serviceaccount controller) and the `kube-root-ca.crt` ConfigMap of every namespace (the
// root-ca-cert-publisher, which also puts its data back after an edit). A namespace that appears gets
// its objects in the same turn, so a test sees them at once; one deleted or edited is put back on
// the next turn, as those controllers would shortly after.
import { byKey } from '../resources.js';
import type { ObjectStore, StoreEvent } from '../store.js';
import { prepareForCreate } from '../strategy.js';
import { jsonEqual, meta, obj, type JsonObject, type KObject } from '../types.js';
import { KUBERNETES_SERVICE_IP, prepareServiceForCreate } from './service.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

export interface ClusterObjectSettings {
  /** The CA bundle kube-root-ca.crt publishes. */
  caPem(): string;
  /** The `kubernetes` Service's targetPort (the API server's secure port). */
  targetPort: number;
}

export class ClusterObjectControllers {
  private readonly unsubscribe: () => void;
  private readonly pending = new Set<NodeJS.Immediate>();

  constructor(
    private readonly store: ObjectStore,
    private readonly settings: ClusterObjectSettings,
  ) {
    this.unsubscribe = store.subscribe((ev) => this.observe(ev));
  }

  close(): void {
    this.unsubscribe();
    for (const p of this.pending) clearImmediate(p);
    this.pending.clear();
  }

  private observe(ev: StoreEvent): void {
    const m = meta(ev.object);
    if (ev.storageKey === 'namespaces' && ev.type === 'ADDED') return this.ensureNamespace(m.name);
    if (ev.storageKey === 'serviceaccounts' && ev.type === 'DELETED' && m.name === 'default')
      return this.later(() => this.ensureNamespace(m.namespace));
    if (ev.storageKey === 'configmaps' && m.name === ROOT_CA_CONFIGMAP && ev.type !== 'ADDED')
      return this.later(() => this.ensureRootCa(m.namespace));
    if (ev.storageKey === 'services' && ev.type === 'DELETED' && m.namespace === 'default' && m.name === 'kubernetes')
      this.later(() => this.ensureKubernetesService());
  }

  private later(fn: () => void): void {
    const handle = setImmediate(() => {
      this.pending.delete(handle);
      fn();
    });
    this.pending.add(handle);
  }

  private create(resource: string, o: KObject): void {
    const rt = byKey(resource);
    this.store.put(rt.storageKey, prepareForCreate(rt, o), 'ADDED');
  }

  private ensureNamespace(ns: string): void {
    if (!this.store.get('namespaces', '', ns)) return;
    if (!this.store.get('serviceaccounts', ns, 'default'))
      this.create('serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'default', namespace: ns },
      });
    this.ensureRootCa(ns);
    if (ns === 'default') this.ensureKubernetesService();
  }

  private ensureRootCa(ns: string): void {
    if (!this.store.get('namespaces', '', ns)) return;
    const data: JsonObject = { 'ca.crt': this.settings.caPem() };
    const current = this.store.get('configmaps', ns, ROOT_CA_CONFIGMAP);
    if (!current) {
      this.create('configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: ROOT_CA_CONFIGMAP,
          namespace: ns,
          annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION },
        },
        data,
      });
      return;
    }
    if (jsonEqual(obj(current.data), data) && current.binaryData === undefined) return;
    const fixed: KObject = { ...current, data };
    delete fixed.binaryData;
    this.store.put('configmaps', fixed, 'MODIFIED');
  }

  private ensureKubernetesService(): void {
    if (!this.store.get('namespaces', '', 'default') || this.store.get('services', 'default', 'kubernetes')) return;
    const svc = prepareForCreate(byKey('services'), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'kubernetes',
        namespace: 'default',
        labels: { component: 'apiserver', provider: 'kubernetes' },
      },
      spec: {
        clusterIP: KUBERNETES_SERVICE_IP,
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: this.settings.targetPort }],
      },
    });
    prepareServiceForCreate(svc, this.store);
    this.store.put('services', svc, 'ADDED');
  }
}

// The kube-controller-manager's csrapproving controller as a kubeadm cluster has it enabled (off
// here unless asked): kubelet client requests are approved when filed by a bootstrap token
// ("nodeclient") or by the node itself renewing ("selfnodeclient": requester = the CSR's CN).
import type { ObjectStore, StoreEvent } from '../store.js';
import { arr, meta, obj, str, type Json } from '../types.js';
import { parseRequest } from './csr-request.js';
import { CSR_STORAGE_KEY } from './csr-strategy.js';
import { KUBELET_CLIENT_SIGNER } from './signer.js';

export interface ApproverSettings {
  /** Approve requests filed by a bootstrap token (kubeadm binds this to its node bootstrap group). */
  nodeClient: boolean;
  /** Approve a node's renewal of its own client certificate. */
  selfNodeClient: boolean;
}

export class CsrApprover {
  settings: ApproverSettings = { nodeClient: false, selfNodeClient: false };
  private readonly unsubscribe: () => void;

  constructor(private readonly store: ObjectStore) {
    this.unsubscribe = store.subscribe((ev) => this.onEvent(ev));
  }

  close(): void {
    this.unsubscribe();
  }

  private onEvent(ev: StoreEvent): void {
    if (ev.storageKey !== CSR_STORAGE_KEY || ev.type !== 'ADDED') return;
    const spec = obj(ev.object.spec);
    if (str(spec.signerName) !== KUBELET_CLIENT_SIGNER || arr(obj(ev.object.status).conditions).length > 0) return;
    let cn: string;
    try {
      cn = parseRequest(str(spec.request)).commonName;
    } catch {
      return;
    }
    const groups = arr(spec.groups).map((g) => str(g));
    const self = str(spec.username) === cn && groups.includes('system:nodes');
    const message = self
      ? this.settings.selfNodeClient && 'Auto approving self kubelet client certificate after SubjectAccessReview.'
      : this.settings.nodeClient &&
        groups.includes('system:bootstrappers') &&
        'Auto approving kubelet client certificate after SubjectAccessReview.';
    if (!message) return;
    // After the create that told us returns, as a controller would act.
    setImmediate(() => {
      const current = this.store.get(CSR_STORAGE_KEY, '', meta(ev.object).name);
      if (!current || meta(current).uid !== meta(ev.object).uid) return;
      const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const status = obj(current.status);
      const approved = {
        type: 'Approved',
        status: 'True',
        reason: 'AutoApproved',
        message,
        lastUpdateTime: at,
        lastTransitionTime: at,
      };
      current.status = { ...status, conditions: [...arr(status.conditions), approved] as Json[] };
      this.store.put(CSR_STORAGE_KEY, current, 'MODIFIED');
    });
  }
}

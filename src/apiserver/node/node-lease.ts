// The node heartbeat: Lease kube-node-lease/<node>, renewed every renew interval with the lease
// duration (40 s), holder the node name, owned by the Node. The lease we last wrote is kept, so a
// renewal is one PUT; a conflict means someone else wrote it: read it back and try again.
import type { Lease } from 'kubernetes-types/coordination/v1';
import { isConflict, isNotFound } from '../client/api-error.js';
import type { ApiClient } from '../client/client.js';
import { apiMicroTime } from '../../util/api-time.js';
import type { Clock } from '../../util/clock.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

function leasesPath(): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${NODE_LEASE_NAMESPACE}/leases`;
}

export class NodeLease {
  private cached: Lease | undefined;

  constructor(
    private readonly client: ApiClient,
    private readonly nodeName: string,
    private readonly nodeUid: () => string | undefined,
    private readonly durationSeconds: number,
    private readonly clock: Clock,
  ) {}

  /** One renewal; throws what the caller retries. Does nothing until the Node is registered. */
  async renew(): Promise<void> {
    const uid = this.nodeUid();
    if (!uid) return;
    const path = `${leasesPath()}/${encodeURIComponent(this.nodeName)}`;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (!this.cached) {
        try {
          this.cached = await this.client.get<Lease>(path);
        } catch (e) {
          if (!isNotFound(e)) throw e;
          this.cached = await this.client.create<Lease>(leasesPath(), this.desired(undefined, uid));
          return;
        }
      }
      try {
        this.cached = await this.client.update<Lease>(path, this.desired(this.cached, uid));
        return;
      } catch (e) {
        // Someone else wrote it (409) or it was deleted (404): start from what the server has.
        this.cached = undefined;
        if (!isConflict(e) && !isNotFound(e)) throw e;
      }
    }
  }

  private desired(base: Lease | undefined, nodeUid: string): Lease {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...(base?.metadata ?? {}),
        name: this.nodeName,
        namespace: NODE_LEASE_NAMESPACE,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: this.nodeName, uid: nodeUid }],
      },
      spec: {
        ...(base?.spec ?? {}),
        holderIdentity: this.nodeName,
        leaseDurationSeconds: this.durationSeconds,
        renewTime: apiMicroTime(this.clock.now()),
      },
    };
  }
}

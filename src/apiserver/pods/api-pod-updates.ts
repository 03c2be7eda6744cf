// The API pods' side on the server: each pod's status patched onto the pod itself (api-pod-status.ts),
// one key per UID beside the mirror pods, and a pod someone deletes given its final grace-0 DELETE once
// its worker removed it (api-pod-deletion.ts), two at a time.
import type { Logger } from '../../log/logger.js';
import type { ApiClient } from '../client/client.js';
import type { ConnectionGate } from '../client/connectivity.js';
import { KeyedQueue } from '../client/keyed-queue.js';
import { ApiPodFinalDelete } from './api-pod-deletion.js';
import { ApiPodStatusSync } from './api-pod-status.js';
import type { ApiPodView, PodStatusSource } from '../pod-sources.js';

export class ApiPodUpdates {
  private readonly status: ApiPodStatusSync;
  private readonly statusQueue: KeyedQueue;
  private readonly finalDelete: ApiPodFinalDelete;
  private readonly deleteQueue: KeyedQueue;

  constructor(
    client: ApiClient,
    statuses: PodStatusSource,
    private readonly pods: ApiPodView,
    gate: ConnectionGate,
    logger: Logger,
  ) {
    const status = new ApiPodStatusSync(client, statuses, pods);
    this.status = status;
    this.statusQueue = new KeyedQueue('Updating API pod status', (uid) => status.sync(uid), gate, logger);
    this.finalDelete = new ApiPodFinalDelete(client, (uid) => status.sync(uid));
    this.deleteQueue = new KeyedQueue(
      'Deleting API pod',
      async (uid) => {
        if (await this.finalDelete.send(uid)) status.deleted(uid);
      },
      gate,
      logger,
      { concurrency: 2 },
    );
    pods.onRemoved((sp) => {
      status.deletionStarted(sp);
      this.finalDelete.deletionStarted(sp);
    });
  }

  /** A pod's status changed: returns whether it is an API pod's (desired, or being deleted), then patched. */
  statusChanged(uid: string): boolean {
    if (!this.pods.apiPodByUid(uid) && !this.status.isLeaving(uid)) return false;
    this.statusQueue.add(uid);
    return true;
  }

  /** A pod's worker removed everything of it: a pod being deleted gets its final DELETE now. */
  podRemoved(uid: string): void {
    if (this.finalDelete.podRemoved(uid)) this.deleteQueue.add(uid);
  }

  /** The periodic pass: every desired API pod's status once more. */
  resync(): void {
    this.status.retain();
    this.statusQueue.addAll(new Set(this.pods.apiPods().map((p) => p.uid)));
  }

  async stop(): Promise<void> {
    await Promise.all([this.statusQueue.stop(), this.deleteQueue.stop()]);
  }
}

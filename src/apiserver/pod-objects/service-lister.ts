// The kubelet's service lister: one LIST+WATCH of every Service of the cluster, started when the
// first pod that may need it is registered (kubelet.go's serviceLister, an informer on all
// Services). The env's service links and KUBERNETES_SERVICE_* read a namespace's Services and
// `default`'s from it. A Service change is not told to pods: the kubelet reads Services only when
// it makes a container's env, and so does bootlet.
import type { Service } from 'kubernetes-types/core/v1';
import type { Logger } from '../../log/logger.js';
import { describeError } from '../client/api-error.js';
import { PodObjectUnavailableError } from '../../node/pod-objects.js';
import type { PodObjectsClient, PodObjectsGate } from './client.js';
import { Reflector } from '../../informer/reflector.js';
import { API_LIST_WATCH_ERRORS } from '../client/list-watch-errors.js';

export interface ServiceListerOptions {
  readonly client: Pick<PodObjectsClient, 'list' | 'watch'>;
  readonly gate: Pick<PodObjectsGate, 'usable'>;
  readonly logger: Logger;
  readonly syncTimeoutMs: number;
  readonly watchSeconds?: () => number;
}

export class ServiceLister {
  private reflector: Reflector<Service> | undefined;

  constructor(private readonly opts: ServiceListerOptions) {}

  get started(): boolean {
    return this.reflector !== undefined;
  }

  start(): void {
    const { client, gate, logger, watchSeconds } = this.opts;
    this.reflector ??= new Reflector<Service>({
      client,
      gate,
      errors: API_LIST_WATCH_ERRORS,
      logger,
      watchSeconds,
      path: '/api/v1/services',
      what: 'Services',
    });
    this.reflector.start();
  }

  serverBack(): void {
    this.reflector?.serverBack();
  }

  async stop(): Promise<void> {
    await this.reflector?.stop();
  }

  /** The Services of `namespace` and of `default`, as last listed or watched. */
  async list(namespace: string): Promise<readonly Service[]> {
    const r = this.reflector;
    if (!r) throw new PodObjectUnavailableError('Services cannot be read: no API pod is registered');
    if (!r.synced) {
      const synced = this.opts.gate.usable && (await r.waitSynced(this.opts.syncTimeoutMs));
      if (!synced)
        throw new PodObjectUnavailableError(
          `Services cannot be read yet: ${r.lastError !== undefined ? describeError(r.lastError) : this.opts.gate.usable ? `not listed within ${this.opts.syncTimeoutMs} ms` : 'the API server is not reachable'}`,
        );
    }
    return r.list().filter((s) => s.metadata?.namespace === namespace || s.metadata?.namespace === 'default');
  }
}

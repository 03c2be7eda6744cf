// The kubelet's RuntimeClass manager on bootlet's API client: one LIST+WATCH of every node.k8s.io/v1
// RuntimeClass (an informer, as the kubelet's), started the first time a pod names one rather than at
// start (a node whose pods name none never asks); a look-up waits, bounded, for the first LIST and
// then reads the cached object. Before there is a connection (DeferredRuntimeClasses) and while none
// was listed, a RuntimeClass is not found, as the kubelet's empty lister says.
import type { ObjectMeta } from 'kubernetes-types/meta/v1';
import { Reflector } from '../../informer/reflector.js';
import { objectKey } from '../../informer/store.js';
import { RuntimeClassNotFoundError, type RuntimeClasses } from '../../kuberuntime/runtime-class.js';
import type { Logger } from '../../log/logger.js';
import { API_LIST_WATCH_ERRORS } from '../client/list-watch-errors.js';
import type { PodObjectsClient, PodObjectsGate } from './client.js';

/** node.k8s.io/v1 RuntimeClass, the fields a node reads (the API side does not use `overhead`: it is on the pod). */
interface RuntimeClass {
  metadata?: ObjectMeta;
  handler?: string;
}

export const RUNTIME_CLASSES_PATH = '/apis/node.k8s.io/v1/runtimeclasses';

export interface ApiRuntimeClassesOptions {
  readonly client: Pick<PodObjectsClient, 'list' | 'watch'>;
  readonly gate: Pick<PodObjectsGate, 'usable'>;
  readonly logger: Logger;
  /** How long a look-up waits for the first LIST (default 3 s, as the pod objects' reads). */
  readonly syncTimeoutMs?: number;
  readonly watchSeconds?: () => number;
}

export class ApiRuntimeClasses implements RuntimeClasses {
  private reflector: Reflector<RuntimeClass> | undefined;

  constructor(private readonly o: ApiRuntimeClassesOptions) {}

  private started(): Reflector<RuntimeClass> {
    if (!this.reflector) {
      this.reflector = new Reflector<RuntimeClass>({
        client: this.o.client,
        gate: this.o.gate,
        errors: API_LIST_WATCH_ERRORS,
        logger: this.o.logger,
        watchSeconds: this.o.watchSeconds,
        path: RUNTIME_CLASSES_PATH,
        what: 'RuntimeClasses',
      });
      this.reflector.start();
    }
    return this.reflector;
  }

  async handlerOf(name: string): Promise<string> {
    const r = this.started();
    if (!r.synced && this.o.gate.usable) await r.waitSynced(this.o.syncTimeoutMs ?? 3000);
    const rc = r.get(objectKey(undefined, name));
    if (!rc) throw new RuntimeClassNotFoundError(name);
    return rc.handler ?? '';
  }

  serverBack(): void {
    this.reflector?.serverBack();
  }

  async stop(): Promise<void> {
    await this.reflector?.stop();
  }
}

/** Handed to the pod runtime at start; the API side attaches its connection's RuntimeClasses once it has one. */
export class DeferredRuntimeClasses implements RuntimeClasses {
  private connected: RuntimeClasses | undefined;

  attach(classes: RuntimeClasses): void {
    this.connected = classes;
  }

  handlerOf(name: string): Promise<string> {
    return this.connected?.handlerOf(name) ?? Promise.reject(new RuntimeClassNotFoundError(name));
  }
}

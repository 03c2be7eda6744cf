// What the runtime says of itself (CRI Status), polled every 5 s as the kubelet's updateRuntimeUp
// does: RuntimeReady, which the Node's Ready condition follows, and NetworkReady, which holds back
// pods on the pod network (the kubelet's runtimeState.networkErrors) and makes the Node not Ready too;
// and the runtime handlers with their features (runtimeState.runtimeHandlers), which decide whether a
// pod may have a user namespace or a recursive read-only mount; and the runtime's own features
// (runtimeState.runtimeFeatures): whether SupplementalGroupsPolicy=Strict is honoured.
import type { NodeRuntimeHandler } from 'kubernetes-types/core/v1';
import type { Logger } from '../log/logger.js';
import type { RuntimeCondition, RuntimeFeatures, RuntimeHandler, RuntimeService } from '../cri/cri-types.js';
import { errorMessage } from '../util/error-message.js';

/** What the kubelet's runtime state holds before the first Status answered (ErrNetworkUnknown). */
export const NETWORK_STATE_UNKNOWN = 'network state unknown';

/** A runtime condition as the kubelet prints one (RuntimeCondition.String); `<nil>` when absent. */
export function formatRuntimeCondition(c: RuntimeCondition | undefined): string {
  return c ? `${c.type}=${c.status} reason:${c.reason} message:${c.message}` : '<nil>';
}

/** The kubelet's network error for a Status answer: undefined when NetworkReady is true. */
export function networkErrorOf(conditions: readonly RuntimeCondition[]): string | undefined {
  const c = conditions.find((x) => x.type === 'NetworkReady');
  return c?.status === true ? undefined : `container runtime network not ready: ${formatRuntimeCondition(c)}`;
}

export class RuntimeHealth {
  private readyNow = true;
  private networkError: string | undefined = NETWORK_STATE_UNKNOWN;
  private handlers: readonly RuntimeHandler[] | undefined;
  private features: RuntimeFeatures | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;

  constructor(
    private readonly runtime: RuntimeService,
    private readonly logger: Logger,
    private readonly periodMs = 5000,
  ) {}

  start(): void {
    void this.pollNow();
    this.timer = setInterval(() => void this.pollNow(), this.periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  ready(): boolean {
    return this.readyNow;
  }

  /** Why pods on the pod network may not start now (the kubelet's networkErrors); undefined when they may. */
  networkNotReady(): string | undefined {
    return this.networkError;
  }

  /** The handlers of the last Status answer; undefined before the first (the kubelet's "not set"). */
  runtimeHandlers(): readonly RuntimeHandler[] | undefined {
    return this.handlers;
  }

  /**
   * Whether the runtime honours SupplementalGroupsPolicy (and reports ContainerStatus.user): false
   * while it says nothing of it (a runtime before containerd 2.0) or has not answered Status yet.
   */
  supplementalGroupsPolicy(): boolean {
    return this.features?.supplementalGroupsPolicy === true;
  }

  /** The Node's status.features (the kubelet's RuntimeFeatures setter): none until the runtime reports features. */
  nodeFeatures(): { supplementalGroupsPolicy: boolean } | undefined {
    return this.features ? { supplementalGroupsPolicy: this.features.supplementalGroupsPolicy === true } : undefined;
  }

  /** The handlers as the Node's status.runtimeHandlers reports them: both features said for each. */
  nodeRuntimeHandlers(): NodeRuntimeHandler[] {
    return (this.handlers ?? []).map((h) => ({
      name: h.name,
      features: {
        recursiveReadOnlyMounts: h.features?.recursiveReadOnlyMounts === true,
        userNamespaces: h.features?.userNamespaces === true,
      },
    }));
  }

  /** The handlers, after one Status round if none answered yet (a pod synced at start does not race it). */
  async answeredHandlers(): Promise<readonly RuntimeHandler[] | undefined> {
    if (this.handlers === undefined) await this.pollNow();
    return this.handlers;
  }

  /** One Status round now (also between the periodic ones, after the pod CIDR was handed over); never rejects. */
  pollNow(): Promise<void> {
    this.polling ??= this.poll().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async poll(): Promise<void> {
    let ready = false;
    let why = '';
    try {
      const { status: st, runtimeHandlers, features } = await this.runtime.statusWithHandlers();
      this.handlers = runtimeHandlers;
      this.features = features;
      const cond = st.conditions.find((c) => c.type === 'RuntimeReady');
      ready = cond?.status === true;
      why = cond ? `${cond.reason} ${cond.message}`.trim() : 'no RuntimeReady condition';
      // As the kubelet: only an answer changes the network state; a failed call leaves it as it was.
      this.setNetworkError(networkErrorOf(st.conditions));
    } catch (err) {
      why = errorMessage(err);
    }
    if (ready !== this.readyNow) {
      if (ready) this.logger.info('Container runtime is ready again');
      else this.logger.warn('Container runtime is not ready', { reason: why });
    }
    this.readyNow = ready;
  }

  private setNetworkError(err: string | undefined): void {
    if (err === this.networkError) return;
    if (err === undefined) this.logger.info('Container runtime network is ready');
    else this.logger.warn('Container runtime network not ready', { networkReady: err });
    this.networkError = err;
  }
}

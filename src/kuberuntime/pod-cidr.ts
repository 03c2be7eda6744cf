// The node's pod CIDR handed to the runtime (the kubelet's updatePodCIDR): UpdateRuntimeConfig once
// per new value, in order, remembered only once the runtime took it, so a failure is tried again the
// next time the Node is read. containerd then writes its CNI config from its conf_template.
import type { Logger } from '../log/logger.js';
import type { RuntimeService } from '../cri/cri-types.js';
import { errorMessage } from '../util/error-message.js';

export class RuntimePodCIDR {
  private current = '';
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly runtime: Pick<RuntimeService, 'updateRuntimeConfig'>,
    private readonly logger: Logger,
    /** After the runtime took a new value (the wiring polls the runtime's status at once). */
    private readonly onUpdated: () => void = () => {},
  ) {}

  /** What the runtime has from us ('' before any). */
  podCIDR(): string {
    return this.current;
  }

  /** `cidrs`: the Node's spec.podCIDRs joined with ","; never rejects. */
  update(cidrs: string): Promise<void> {
    this.chain = this.chain.then(() => this.send(cidrs));
    return this.chain;
  }

  private async send(cidrs: string): Promise<void> {
    if (cidrs === '' || cidrs === this.current) return;
    try {
      await this.runtime.updateRuntimeConfig(cidrs);
    } catch (err) {
      this.logger.error('Failed to update pod CIDR', { podCIDR: cidrs, err: errorMessage(err) });
      return;
    }
    this.logger.info('Updating Pod CIDR', { originalPodCIDR: this.current, newPodCIDR: cidrs });
    this.current = cidrs;
    this.onUpdated();
  }
}

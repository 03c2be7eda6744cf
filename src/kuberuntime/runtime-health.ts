// Whether the runtime says it is ready (CRI Status, RuntimeReady), polled every 5 s as the kubelet
// does; the Node's Ready condition follows it.
import type { Logger } from '../log/logger.js';
import type { RuntimeService } from '../cri/cri-types.js';
import { errorMessage } from '../util/error-message.js';

export class RuntimeHealth {
  private readyNow = true;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly runtime: RuntimeService,
    private readonly logger: Logger,
    private readonly periodMs = 5000,
  ) {}

  start(): void {
    void this.poll();
    this.timer = setInterval(() => void this.poll(), this.periodMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  ready(): boolean {
    return this.readyNow;
  }

  private async poll(): Promise<void> {
    let ready = false;
    let why = '';
    try {
      const st = await this.runtime.status();
      const cond = st.conditions.find((c) => c.type === 'RuntimeReady');
      ready = cond?.status === true;
      why = cond ? `${cond.reason} ${cond.message}`.trim() : 'no RuntimeReady condition';
    } catch (err) {
      why = errorMessage(err);
    }
    if (ready !== this.readyNow) {
      if (ready) this.logger.info('Container runtime is ready again');
      else this.logger.warn('Container runtime is not ready', { reason: why });
    }
    this.readyNow = ready;
  }
}

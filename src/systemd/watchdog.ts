// The systemd watchdog (WatchdogSec=): WATCHDOG=1 every half period, but only while the agent is
// healthy, so that systemd restarts an agent whose sync loop or PLEG is stuck (or whose event loop
// is blocked: then no timer fires at all). The pods keep running across that restart
// (KillMode=process), and the new agent adopts them.
import type { Logger } from '../log/logger.js';

export interface WatchdogOptions {
  /** $WATCHDOG_USEC */
  readonly usec: number;
  /** Why the agent is not healthy, or undefined when it is. */
  health(): string | undefined;
  send(): void;
  logger: Logger;
}

/** WATCHDOG_USEC when it is meant for this process (WATCHDOG_PID unset or ours), else undefined. */
export function watchdogUsecFromEnv(env: NodeJS.ProcessEnv, pid: number = process.pid): number | undefined {
  const usec = Number(env.WATCHDOG_USEC);
  if (!Number.isFinite(usec) || usec <= 0) return undefined;
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== '' && Number(env.WATCHDOG_PID) !== pid) return undefined;
  return usec;
}

export class Watchdog {
  private timer: NodeJS.Timeout | undefined;
  private withheldFor: string | undefined;

  constructor(private readonly o: WatchdogOptions) {}

  get intervalMs(): number {
    return Math.max(1, Math.floor(this.o.usec / 2000));
  }

  start(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check: pings when healthy; says once why it does not. */
  tick(): void {
    const problem = this.o.health();
    if (problem === undefined) {
      if (this.withheldFor !== undefined) this.o.logger.info('Agent healthy again; pinging the systemd watchdog', {});
      this.withheldFor = undefined;
      this.o.send();
      return;
    }
    if (problem !== this.withheldFor)
      this.o.logger.error(
        'Agent unhealthy; withholding the systemd watchdog ping, systemd will restart the agent (pods keep running)',
        { reason: problem },
      );
    this.withheldFor = problem;
  }
}

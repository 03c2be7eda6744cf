// One serial queue per name in the manifest path: a name is never looked at twice at once, so an
// older read can never overtake a newer one, and requests while a look is under way fold into one
// more look after it. Watcher events wait a short quiet time first (editors write in bursts).
// At most MAX_LOOKS_IN_FLIGHT names are looked at at once, the rest in the order asked: a flood of
// 2,000 new files is read, parsed and accepted a few at a time, each one as soon as it is ready,
// instead of 2,000 reads, buffers and parses in flight together.
import type { Logger } from '../log/logger';
import { errorMessage } from '../util/error-message';
import { KeyedSerialRunner } from '../util/serial-runner';

/** Enough to keep the disk and the parser busy; a look is a few stats, two reads and a parse. */
export const MAX_LOOKS_IN_FLIGHT = 16;

export class ManifestQueue {
  private readonly runner: KeyedSerialRunner<string>;
  /** Names waiting out their quiet time; only names with a pending event are here. */
  private readonly timers = new Map<string, { cancel(): void }>();
  private stopped = false;

  constructor(look: (file: string) => Promise<void>, log: Logger) {
    const logFailure = (file: string, err: unknown): void =>
      log.error('Could not process manifest file', { file, err: errorMessage(err) });
    this.runner = new KeyedSerialRunner(
      (file) => (this.stopped ? Promise.resolve() : look(file).catch((err: unknown) => logFailure(file, err))),
      { concurrency: MAX_LOOKS_IN_FLIGHT },
    );
  }

  /** Looks at `file` now, or once more after the look under way; never rejects. */
  run(file: string): Promise<void> {
    return this.runner.run(file);
  }

  /** Looks at `file` after `delayMs` without another request for it (each request restarts the wait). */
  schedule(file: string, delayMs: number): void {
    if (this.stopped) return;
    this.timers.get(file)?.cancel();
    const fire = (): void => {
      this.timers.delete(file);
      void this.run(file);
    };
    // No wait asked (a name renamed into place): the next turn, not a timer's millisecond. Events of
    // one inotify read still come together into one look.
    if (delayMs <= 0) {
      const immediate = setImmediate(fire);
      this.timers.set(file, { cancel: () => clearImmediate(immediate) });
    } else {
      const timer = setTimeout(fire, delayMs);
      this.timers.set(file, { cancel: () => clearTimeout(timer) });
    }
  }

  /** No look starts from now on; pending quiet times are dropped. */
  stop(): void {
    this.stopped = true;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
  }

  /** Resolves when no look is under way or queued. */
  idle(): Promise<void> {
    return this.runner.idle();
  }
}

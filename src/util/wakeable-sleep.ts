// A supervised loop's pause: it ends after `ms`, or at once when woken (the server is back, the loop
// is stopped). One pause at a time; waking when nothing sleeps does nothing.
export class WakeableSleep {
  private wakeFn: (() => void) | undefined;

  /** Waits `ms`, or until woken when `ms` is undefined. */
  sleep(ms: number | undefined): Promise<void> {
    return new Promise((resolve) => {
      const t = ms === undefined ? undefined : setTimeout(() => done(), ms);
      const done = (): void => {
        if (t) clearTimeout(t);
        this.wakeFn = undefined;
        resolve();
      };
      this.wakeFn = done;
    });
  }

  wake(): void {
    this.wakeFn?.();
  }
}

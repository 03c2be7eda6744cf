// Keeps one runtime event stream open: a stream that has stayed open for `confirmMs` (or delivered
// an event) is up; one that ends is down and is reopened after the reconnect back-off; one that the
// runtime does not serve (UNIMPLEMENTED) is given up for good. A server stream that is served but
// quiet sends nothing at all, not even headers, so staying open is the only sign of support.
// Being up is not being healthy: the back-off starts again from its floor only once a stream has
// lived for the policy's resetAfterMs, so a stream that delivers an event and dies keeps backing off.
import { Backoff, RECONNECT_BACKOFF } from '../util/backoff.js';

export interface StreamHandle {
  cancel(): void;
}

export interface StreamCallbacks {
  /** Any message: proves the stream is served. */
  onMessage(): void;
  /** Called once, when the stream ends; `err` undefined for a clean end by the server. */
  onEnd(err?: { unsupported: boolean; message: string }): void;
}

export interface StreamSupervisorOptions {
  open(cb: StreamCallbacks): StreamHandle;
  confirmMs: number;
  /** Default: a Backoff with RECONNECT_BACKOFF (at least 1 s apart; reset after 30 s up). */
  backoff?: Backoff;
  /** The stream is (again) delivering: events will be heard at once. */
  onUp(): void;
  /** The stream ended; it is reopened after `retryInMs`. Events may have been missed meanwhile. */
  onDown(reason: string, retryInMs: number): void;
  /** The runtime does not serve this stream. */
  onUnsupported(reason: string): void;
}

export class StreamSupervisor {
  private handle: StreamHandle | undefined;
  private confirmTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly backoff: Backoff;
  private stopped = false;
  /** Whether the stream was ever up: UNIMPLEMENTED after that is an outage, not a verdict. */
  private everUp = false;

  constructor(private readonly opts: StreamSupervisorOptions) {
    this.backoff = opts.backoff ?? new Backoff(RECONNECT_BACKOFF);
  }

  start(): void {
    this.stopped = false;
    this.open();
  }

  stop(): void {
    this.stopped = true;
    if (this.confirmTimer) clearTimeout(this.confirmTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.confirmTimer = this.retryTimer = undefined;
    const h = this.handle;
    this.handle = undefined;
    h?.cancel();
  }

  private open(): void {
    const openedAt = this.backoff.now();
    let up = false;
    let ended = false;
    const markUp = (): void => {
      if (up || ended || this.stopped) return;
      up = true;
      this.everUp = true;
      if (this.confirmTimer) clearTimeout(this.confirmTimer);
      this.confirmTimer = undefined;
      // Healthy from its opening: being up is a verdict on the stream as it has been since then.
      this.backoff.healthy(openedAt);
      this.opts.onUp();
    };
    const handle = this.opts.open({
      onMessage: markUp,
      onEnd: (err) => {
        if (ended) return;
        ended = true;
        this.handle = undefined;
        if (this.confirmTimer) clearTimeout(this.confirmTimer);
        this.confirmTimer = undefined;
        if (this.stopped) return;
        if (err?.unsupported && !this.everUp) {
          this.opts.onUnsupported(err.message);
          return;
        }
        const retryInMs = this.backoff.next();
        this.opts.onDown(err?.message ?? 'the runtime closed the stream', retryInMs);
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          if (!this.stopped) this.open();
        }, retryInMs);
        this.retryTimer.unref?.();
      },
    });
    if (!ended) this.handle = handle;
    if (!ended && !up) {
      this.confirmTimer = setTimeout(markUp, this.opts.confirmMs);
      this.confirmTimer.unref?.();
    }
  }
}

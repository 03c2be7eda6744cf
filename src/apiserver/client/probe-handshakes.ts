// How the reachability probe of a hung server (it accepts, it never answers) opens connections. Such
// a server made every probe after the first open a connection of its own, one every 1.2 s, each left
// open until its probe's deadline: up to six TLS connections per node. Now a probe goes as a stream
// on the open connection whenever there is one (free, and it sees a server that answers again as
// soon as the old one would), and a new connection, fresh beside a connection that may be dead or
// the first after it closed, waits its turn on a back-off that grows while the server stays hung.
// An answer, or a failure too quick to be a hang (nothing listening, a reset), ends the hang and the
// back-off.
import { Backoff, type BackoffPolicy } from '../../util/backoff.js';
import { PROBE_HANDSHAKE_BACKOFF } from './retry-policy.js';

/** The next probe: now, on a fresh connection or not; or not before `waitMs` from now. */
export type ProbeRoute = { readonly fresh: boolean } | { readonly waitMs: number };

export class ProbeHandshakes {
  private hung = false;
  private allowedAt = 0;
  private readonly backoff: Backoff;

  constructor(
    policy: BackoffPolicy = PROBE_HANDSHAKE_BACKOFF,
    private readonly now: () => number = Date.now,
  ) {
    this.backoff = new Backoff(policy, { now });
  }

  /**
   * `company`: other probes are in flight, all unanswered for a while (the connection they went over
   * may be dead). `needsHandshake`: sent now, the probe would open a new connection anyway.
   */
  route(company: boolean, needsHandshake: boolean): ProbeRoute {
    const now = this.now();
    const due = !this.hung || now >= this.allowedAt;
    if (!due && needsHandshake) return { waitMs: this.allowedAt - now };
    const fresh = company && this.hung && due;
    if (fresh || needsHandshake) this.allowedAt = now + this.backoff.next(now);
    return { fresh };
  }

  /** A probe has been unanswered PROBE_HUNG_MS. */
  hangs(): void {
    this.hung = true;
  }

  /** A probe was answered, or failed before it could count as hung: handshakes are free again. */
  answered(): void {
    this.hung = false;
    this.allowedAt = 0;
    this.backoff.reset();
  }
}

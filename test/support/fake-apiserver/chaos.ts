import { injected, type ApiError } from './status.js';

/** The request facts a failNext filter sees. */
export interface RequestFacts {
  method: string;
  path: string;
  user: string;
  userAgent: string;
}

/**
 * What a watch stream does instead of streaming on, as a misbehaving proxy in front of the server
 * would: end cleanly or cut the connection right after its first event (a BOOKMARK), or send one
 * line of `hugeLineBytes` that never ends with a newline.
 */
export type WatchFault = 'end-after-first-event' | 'cut-after-first-event' | 'huge-line';

/** The faults a test can ask for: slowness, injected failures, a server that never answers, broken watches. */
export class Chaos {
  latencyMs = 0;
  hanging = false;
  /** /readyz answers 500, as kube-apiserver's does while its post-start hooks run; everything else is served. */
  notReady = false;
  watchFault: WatchFault | undefined;
  hugeLineBytes = 100 * 1024 * 1024;
  /** Bytes of huge lines written so far (accepted by the socket): how much the client let in. */
  hugeLineBytesSent = 0;
  private failures:
    | { count: number; status: 500 | 503 | 429; retryAfterSeconds?: number; only?: (r: RequestFacts) => boolean }
    | undefined;

  failNext(
    count: number,
    status: 500 | 503 | 429,
    retryAfterSeconds?: number,
    only?: (r: RequestFacts) => boolean,
  ): void {
    this.failures = count > 0 ? { count, status, retryAfterSeconds, only } : undefined;
  }

  /** The failure to answer this request with, consuming one from failNext. */
  takeFailure(r: RequestFacts): ApiError | undefined {
    const f = this.failures;
    if (!f || (f.only && !f.only(r))) return undefined;
    f.count--;
    if (f.count <= 0) this.failures = undefined;
    return injected(f.status, f.retryAfterSeconds);
  }

  reset(): void {
    this.latencyMs = 0;
    this.hanging = false;
    this.notReady = false;
    this.watchFault = undefined;
    this.failures = undefined;
  }
}

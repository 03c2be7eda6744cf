import { injected, type ApiError } from './status.js';

/** The request facts a failNext filter sees. */
export interface RequestFacts {
  method: string;
  path: string;
  user: string;
  userAgent: string;
}

/** The faults a test can ask for: slowness, injected failures, a server that never answers. */
export class Chaos {
  latencyMs = 0;
  hanging = false;
  private failures: { count: number; status: 500 | 503 | 429; retryAfterSeconds?: number; only?: (r: RequestFacts) => boolean } | undefined;

  failNext(count: number, status: 500 | 503 | 429, retryAfterSeconds?: number, only?: (r: RequestFacts) => boolean): void {
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
    this.failures = undefined;
  }
}

// How requests to the API server are retried (node status, lease, mirror pods, statuses, events).
// A failure while the server is reachable is retried soon; a refusal (403, 422...) needs someone to
// fix something and is retried slowly. Either starts again from its floor only once the work has
// gone through for a while, so a request that works once between failures does not reset it.
import type { BackoffPolicy } from '../util/backoff.js';

export const API_RETRY_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 4000, jitter: 0.2, resetAfterMs: 30_000 };
export const API_REFUSED_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, jitter: 0.2, resetAfterMs: 30_000 };

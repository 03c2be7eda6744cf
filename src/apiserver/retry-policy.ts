// How requests to the API server are retried (node status, lease, mirror pods, statuses, events).
// A failure while the server is reachable is retried soon; a refusal (403, 422...) needs someone to
// fix something and is retried slowly. Either starts again from its floor only once the work has
// gone through for a while, so a request that works once between failures does not reset it.
import type { BackoffPolicy } from '../util/backoff.js';

export const API_RETRY_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 4000, jitter: 0.2, resetAfterMs: 30_000 };
export const API_REFUSED_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, jitter: 0.2, resetAfterMs: 30_000 };

/**
 * Reachability probes of a server that is away (connectivity.ts): a probe unanswered for
 * PROBE_HUNG_MS gets company, up to this many in flight, so a server that stops hanging is seen
 * within about a second rather than at the end of the oldest probe's timeout.
 */
export const MAX_PROBES_IN_FLIGHT = 5;
export const PROBE_HUNG_MS = 1000;

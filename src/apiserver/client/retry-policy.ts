// How requests to the API server are retried (node status, lease, mirror pods, statuses, events),
// and how a server that is away is probed.
// A failure while the server is reachable is retried soon; a refusal (403, 422...) needs someone to
// fix something and is retried slowly. Either starts again from its floor only once the work has
// gone through for a while, so a request that works once between failures does not reset it.
import type { BackoffPolicy } from '../../util/backoff.js';

export const API_RETRY_BACKOFF: BackoffPolicy = { initialMs: 200, maxMs: 4000, jitter: 0.2, resetAfterMs: 30_000 };
export const API_REFUSED_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, jitter: 0.2, resetAfterMs: 30_000 };

// The reachability probe of a server that is away (connectivity.ts).

/**
 * The pause between probes while the server is away: 200–250 ms, jittered so that the nodes of a
 * cluster do not probe in step. Flat, not growing: a probe of a server that is not listening is
 * one refused connect, and one that is not ready yet answers from a kept-alive connection.
 */
export const PROBE_INTERVAL: BackoffPolicy = { initialMs: 200, maxMs: 200, jitter: 0.25, resetAfterMs: 0, factor: 1 };

/** A probe that gets no answer in this long counts as a failure. */
export const PROBE_TIMEOUT_MS = 5000;

/**
 * A probe unanswered for PROBE_HUNG_MS gets company, up to this many in flight, so a server that
 * stops hanging is seen within about a second rather than at the end of the oldest probe's timeout.
 * The company goes as another stream on the open connection (no handshake).
 */
export const MAX_PROBES_IN_FLIGHT = 5;
export const PROBE_HUNG_MS = 1000;

/**
 * While probes hang, a new TLS connection (a fresh one beside the open one, which may be dead, or
 * the first after it closed) is opened no sooner than this after the last: 2 s, 4, 8, then every
 * 16–20 s while the server stays hung. A handshake costs the server (or the load balancer in front
 * of it) far more than a stream on an open connection; a connection that died silently (a middlebox
 * that lost its state) is still left within 20 s, well inside the 40 s Lease.
 */
export const PROBE_HANDSHAKE_BACKOFF: BackoffPolicy = { initialMs: 2000, maxMs: 16_000, jitter: 0.25, resetAfterMs: 0 };

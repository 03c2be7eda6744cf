// How often a certificate request is tried again. While the API server is not there, every ~2 s
// (the kubelet's waitForServer polls /healthz so), so that a server that bootlet itself brings up is
// used within seconds. Any other failure backs off as the certificate manager does: 2, 4, 8, 16 s,
// then every 32 s, each up to 10 % later. Nothing here gives up; stop() (the signal) ends it.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log/logger.js';
import { describeError, isUnavailable } from '../client/api-error.js';
import { Backoff } from '../../util/backoff.js';

export interface RetryOptions {
  /** What is being done, for the log: "Requesting a client certificate". */
  what: string;
  signal: AbortSignal;
  logger: Logger;
  random?: () => number;
}

/** Runs `attempt` until it resolves; resolves with its value. Rejects only with the signal's AbortError. */
export async function retryUntilDone<T>(attempt: () => Promise<T>, opts: RetryOptions): Promise<T> {
  const random = opts.random ?? Math.random;
  const backoff = new Backoff(
    { initialMs: 2000, maxMs: 32_000, jitter: 0, resetAfterMs: Number.POSITIVE_INFINITY },
    { random },
  );
  let lastLogged = '';
  for (;;) {
    opts.signal.throwIfAborted();
    try {
      return await attempt();
    } catch (e) {
      if (opts.signal.aborted) throw opts.signal.reason;
      const away = isUnavailable(e);
      // Up to 10 % later for the manager's back-off; ±20 % around 2 s while polling for a server.
      const delay = away
        ? Math.round(2000 * (0.8 + 0.4 * random()))
        : Math.round(backoff.next() * (1 + 0.1 * random()));
      const err = describeError(e);
      // One line per distinct failure: an absent server is not worth a line every 2 s.
      const key = away ? 'away' : err;
      if (key !== lastLogged) {
        opts.logger.warn(`${opts.what} failed; retrying`, { err, retryInMs: delay, serverAway: away });
        lastLogged = key;
      } else opts.logger.v(2).info(`${opts.what} failed; retrying`, { err, retryInMs: delay });
      await sleep(delay, undefined, { signal: opts.signal });
    }
  }
}

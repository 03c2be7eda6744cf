// Client certificate rotation, as client-go's certificate manager does it for the kubelet: the
// current pair is replaced at a deadline drawn once per certificate at 70-90 % of its lifetime (so
// that nodes made together do not all renew together), at once when there is no usable pair or it
// does not match the node's subject, and on every attempt with a fresh ECDSA P-256 key and a
// `csr-` request. Requests go out with the current pair while it is valid, else with the bootstrap
// credentials. Once the API side is connected a request goes over its one client (the node's one
// connection); only without it (bootstrap, before the API side starts) is a client made for the
// attempt and closed after it. A new pair is written to the store and the API client is told to use it.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../log/logger.js';
import { parseCertificatePair, type CertificatePair } from './certificate-pair.js';
import { retryUntilDone } from './certificate-retry.js';
import type { CertificateStore } from './certificate-store.js';
import type { RequestSubject } from './pkcs10.js';
import type { CsrClient } from './certificate-signing-request.js';
import type { ApiClient } from '../client/client.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';

/** Go's wait.Jitter(d, 0.2) - 0.3 d: a point in [70 %, 90 %) of the lifetime. */
export function jitteryDuration(totalMs: number, random: () => number): number {
  return totalMs + random() * 0.2 * totalMs - 0.3 * totalMs;
}

/** Whether the pair is what the node asks for: same CN, and every O asked for (extra O are fine). */
export function satisfiesSubject(pair: CertificatePair, subject: RequestSubject): boolean {
  return pair.commonName === subject.commonName && subject.organization.every((o) => pair.organization.includes(o));
}

/** When to request the next certificate: now without a fitting pair, else notBefore + 70-90 % of the lifetime. */
export function nextRotationDeadline(
  pair: CertificatePair | undefined,
  subject: RequestSubject,
  now: Date,
  random: () => number,
): Date {
  if (!pair || !satisfiesSubject(pair, subject)) return now;
  const total = pair.notAfter.getTime() - pair.notBefore.getTime();
  return new Date(pair.notBefore.getTime() + jitteryDuration(total, random));
}

/** The part of the certificate machinery that files a request (loaded only when one is made). */
export type RequestFn = (client: CsrClient, key: KeyObject, signal: AbortSignal) => Promise<string>;

/** The client of one attempt, and what to do with it after: close one made for it, leave a shared one. */
export interface AttemptClient {
  client: CsrClient;
  release(): void;
}

/** A client made for this attempt alone: closed after it. */
export function ownClient(client: ApiClient): AttemptClient {
  return { client, release: () => client.close() };
}

/** The API side's client: it stays open for everything else it carries. */
export function sharedClient(client: CsrClient): AttemptClient {
  return { client, release: () => {} };
}

export interface CertificateRotationOptions {
  store: CertificateStore;
  subject: RequestSubject;
  /** A client for the request: with the current pair when it is valid (given), else the bootstrap credentials. */
  clientFor(current: CertificatePair | undefined): AttemptClient;
  /** Files the request for a new key and waits for its certificate. */
  request: RequestFn;
  /** After a new pair is current in the store. */
  onRotated(pair: CertificatePair): void;
  /** Replace the current pair at once (it was only a bootstrap pair). */
  forceRotation?: boolean;
  logger: Logger;
  clock?: Clock;
  random?: () => number;
  /** Longest single sleep; the deadline is re-checked after it (timers cannot wait a year). */
  maxSleepMs?: number;
  /** In log lines: "client certificate" (default) or "serving certificate". */
  label?: string;
  /** Whether a pair is still what the node asks for; default: the subject (a serving pair also checks its SANs). */
  satisfies?: (pair: CertificatePair) => boolean;
}

export class CertificateRotation {
  private readonly abort = new AbortController();
  private readonly clock: Clock;
  private readonly random: () => number;
  private current: CertificatePair | undefined;
  private force: boolean;
  /** Wakes the sleep early: the pair changed under us. */
  private wake: AbortController | undefined;
  private done: Promise<void> = Promise.resolve();

  private readonly label: string;
  private readonly Label: string;

  constructor(private readonly opts: CertificateRotationOptions) {
    this.label = opts.label ?? 'client certificate';
    this.Label = this.label[0]!.toUpperCase() + this.label.slice(1);
    this.clock = opts.clock ?? systemClock;
    this.random = opts.random ?? Math.random;
    this.force = opts.forceRotation ?? false;
  }

  start(current: CertificatePair | undefined): void {
    this.current = current;
    this.opts.logger.info(
      `${this.Label} rotation is enabled`,
      current ? { subject: current.commonName, notAfter: current.notAfter.toISOString() } : { subject: 'none yet' },
    );
    this.done = this.run().catch((e: unknown) => {
      if (!this.abort.signal.aborted)
        this.opts.logger.error(`${this.Label} rotation stopped unexpectedly`, { err: errorMessage(e) });
    });
  }

  /** The pair in the store changed (an operator replaced it): plan from the new one. */
  pairChanged(pair: CertificatePair): void {
    this.current = pair;
    this.wake?.abort();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.wake?.abort();
    await this.done;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      let deadline = this.clock.now();
      let reason = `no ${this.label}`;
      if (this.force) reason = 'replacing the bootstrap certificate';
      else if (this.current && !this.fits(this.current))
        reason = `certificate ${this.current.commonName} does not match what the node asks for (${this.opts.subject.commonName})`;
      else if (this.current) {
        deadline = nextRotationDeadline(this.current, this.opts.subject, this.clock.now(), this.random);
        reason = 'rotation deadline reached';
        this.opts.logger.info(`${this.Label} rotation deadline`, {
          notAfter: this.current.notAfter.toISOString(),
          deadline: deadline.toISOString(),
        });
      }
      this.force = false;
      if (!(await this.sleepUntil(deadline))) continue; // woken: the pair changed, plan again
      this.opts.logger.info(`Rotating the ${this.label}`, { reason });
      const pair = await retryUntilDone(() => this.rotateOnce(), {
        what: `Requesting a ${this.label}`,
        signal,
        logger: this.opts.logger,
        random: this.random,
      });
      this.current = pair;
      this.opts.logger.info(`${this.Label} rotated`, {
        file: this.opts.store.currentPath,
        subject: pair.commonName,
        notAfter: pair.notAfter.toISOString(),
      });
      this.opts.onRotated(pair);
    }
  }

  /** Resolves true at the deadline, false when woken early; rejects when stopped. */
  private async sleepUntil(deadline: Date): Promise<boolean> {
    const maxSleep = this.opts.maxSleepMs ?? 24 * 3600_000;
    for (;;) {
      const left = deadline.getTime() - this.clock.now().getTime();
      if (left <= 0) return true;
      this.wake = new AbortController();
      const both = AbortSignal.any([this.abort.signal, this.wake.signal]);
      try {
        await sleep(Math.min(left, maxSleep), undefined, { signal: both });
      } catch (e) {
        this.abort.signal.throwIfAborted();
        return false;
      } finally {
        this.wake = undefined;
      }
    }
  }

  private fits(pair: CertificatePair): boolean {
    return satisfiesSubject(pair, this.opts.subject) && (this.opts.satisfies?.(pair) ?? true);
  }

  private async rotateOnce(): Promise<CertificatePair> {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const valid =
      this.current && this.current.notAfter.getTime() > this.clock.now().getTime() ? this.current : undefined;
    const attempt = this.opts.clientFor(valid);
    try {
      const certPem = await this.opts.request(attempt.client, privateKey, this.abort.signal);
      const keyPem = privateKey.export({ type: 'sec1', format: 'pem' }).toString();
      // A certificate for another subject would be "due" again at once: a failure, retried with back-off.
      const issued = parseCertificatePair(certPem, keyPem);
      if (!this.fits(issued))
        throw new Error(
          `the issued certificate is for ${issued.commonName} (${issued.organization.join(',')}), not ${this.opts.subject.commonName}`,
        );
      return this.opts.store.update(certPem, keyPem);
    } finally {
      attempt.release();
    }
  }
}

// The kubelet's token manager (pkg/kubelet/token/token_manager.go): service account tokens bound
// to a pod, from TokenRequest (POST .../serviceaccounts/<sa>/token), cached per pod, service
// account, audience and expiration. A token is renewed once it is older than 80 % of its life or
// 24 h (less a jitter of up to 10 s, so pods started together do not renew together). Unlike the
// kubelet, which renews when its volume manager next reads the token (every minute or so), the
// renewal here is timed, and a renewed token is told (onChange with the pod's UID) so that its
// files are rewritten at once. When renewal fails the old token is kept while it is valid; the
// renewal is tried again after a back-off, or as soon as the server is back.
import type { TokenRequest } from 'kubernetes-types/authentication/v1';
import type { Logger } from '../../log/logger.js';
import { Backoff, type BackoffPolicy } from '../../util/backoff.js';
import { describeError } from '../client/api-error.js';
import { PodObjectUnavailableError, type ServiceAccountToken, type TokenRequestFor } from '../../node/pod-objects.js';
import type { PodObjectsClient, PodObjectsGate } from './client.js';

const MAX_TTL_MS = 24 * 60 * 60_000;
const MAX_JITTER_MS = 10_000;
/** The token manager's gcPeriod: expired tokens are dropped this often. */
const GC_PERIOD_MS = 60_000;
/** setTimeout's longest delay; a renewal further away is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A failed renewal: 1 s doubling to 1 min, jittered, while the old token is still valid. */
export const TOKEN_RENEWAL_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 60_000, jitter: 0.2, resetAfterMs: 0 };

export interface TokenManagerOptions {
  readonly client: Pick<PodObjectsClient, 'create'>;
  readonly gate: Pick<PodObjectsGate, 'usable'>;
  readonly logger: Logger;
  /** Whether the pod is registered: only their tokens are renewed ahead of time. */
  readonly registered: (podUid: string) => boolean;
  /** A token was renewed: the pod's UID. */
  readonly onChange: (podUids: readonly string[]) => void;
  /** In [0, 1): the jitter; default Math.random. */
  readonly random?: () => number;
  readonly renewalBackoff?: BackoffPolicy;
}

interface CachedToken {
  readonly key: string;
  readonly req: TokenRequestFor;
  token?: ServiceAccountToken;
  /** When the token was issued: its expiry less the life the server gave it. */
  issuedAt: number;
  jitterMs: number;
  pending?: Promise<ServiceAccountToken>;
  timer?: NodeJS.Timeout;
  readonly backoff: Backoff;
  /** Waiting for the server to come back before the next renewal. */
  waitingForServer: boolean;
  failing: boolean;
}

export function tokenKey(req: TokenRequestFor): string {
  const p = req.pod.metadata;
  return JSON.stringify([
    p.namespace,
    req.serviceAccountName,
    req.audience ?? '',
    req.expirationSeconds,
    p.name,
    p.uid,
  ]);
}

export class ServiceAccountTokenManager {
  private readonly cache = new Map<string, CachedToken>();
  private readonly random: () => number;
  private readonly gc: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly opts: TokenManagerOptions) {
    this.random = opts.random ?? Math.random;
    this.gc = setInterval(() => this.dropExpired(), GC_PERIOD_MS);
    this.gc.unref?.();
  }

  /** Tokens cached now. */
  get size(): number {
    return this.cache.size;
  }

  async get(req: TokenRequestFor): Promise<ServiceAccountToken> {
    const key = tokenKey(req);
    let entry = this.cache.get(key);
    if (entry?.token && !this.requiresRenewal(entry)) return entry.token;
    if (!entry) {
      entry = {
        key,
        req,
        issuedAt: 0,
        jitterMs: 0,
        backoff: new Backoff(this.opts.renewalBackoff ?? TOKEN_RENEWAL_BACKOFF),
        waitingForServer: false,
        failing: false,
      };
      this.cache.set(key, entry);
    }
    const e = entry;
    try {
      return await this.renew(e);
    } catch (err) {
      if (e.token && !this.expired(e)) return e.token;
      if (!e.token && this.cache.get(key) === e && !e.timer) this.cache.delete(key);
      throw new PodObjectUnavailableError(
        `service account token for ${describeRequest(req)} cannot be had: ${describeError(err)}`,
      );
    }
  }

  /** The pod is gone: its tokens are forgotten and no longer renewed (DeleteServiceAccountToken). */
  forgetPod(podUid: string): void {
    for (const [key, e] of this.cache) {
      if (e.req.pod.metadata.uid !== podUid) continue;
      if (e.timer) clearTimeout(e.timer);
      this.cache.delete(key);
    }
  }

  /** A pod is registered (maybe after its tokens were first asked for): their renewals are timed from now on. */
  podRegistered(podUid: string): void {
    for (const e of this.cache.values())
      if (e.req.pod.metadata.uid === podUid && e.token && !e.timer && !e.pending && !e.waitingForServer)
        this.schedule(e, this.renewAt(e) - Date.now());
  }

  /** The server is back: renewals that waited for it go now. */
  serverBack(): void {
    for (const e of this.cache.values()) {
      if (!e.waitingForServer) continue;
      e.waitingForServer = false;
      this.schedule(e, 0);
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.gc);
    for (const e of this.cache.values()) if (e.timer) clearTimeout(e.timer);
    this.cache.clear();
  }

  /** One TokenRequest for the entry at a time; the answer is cached and its renewal timed. */
  private renew(e: CachedToken): Promise<ServiceAccountToken> {
    e.pending ??= this.request(e.req)
      .then((got) => {
        if (this.cache.get(e.key) === e) {
          e.token = got.token;
          e.issuedAt = got.token.expiresAt.getTime() - got.lifeMs;
          e.jitterMs = Math.floor(this.random() * (MAX_JITTER_MS / 1000)) * 1000;
          e.backoff.reset();
          if (e.failing)
            this.opts.logger.info('Service account token renewed again', { token: describeRequest(e.req) });
          e.failing = false;
          this.schedule(e, this.renewAt(e) - Date.now());
        }
        return got.token;
      })
      .finally(() => (e.pending = undefined));
    return e.pending;
  }

  private async request(req: TokenRequestFor): Promise<{ token: ServiceAccountToken; lifeMs: number }> {
    if (!this.opts.gate.usable) throw new Error('the API server is not reachable');
    const p = req.pod.metadata;
    const body: TokenRequest = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        audiences: req.audience ? [req.audience] : [],
        expirationSeconds: req.expirationSeconds,
        boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: p.name, uid: p.uid },
      },
    };
    const path = `/api/v1/namespaces/${encodeURIComponent(p.namespace)}/serviceaccounts/${encodeURIComponent(req.serviceAccountName)}/token`;
    const answer = await this.opts.client.create<TokenRequest>(path, body);
    const token = answer?.status?.token;
    const expiresAt = new Date(answer?.status?.expirationTimestamp ?? NaN);
    if (!token || Number.isNaN(expiresAt.getTime()))
      throw new Error('the TokenRequest answer has no token or expirationTimestamp');
    // The server may give another life than asked (its maximum, or the extended kube-api-access one).
    const lifeSeconds = answer.spec?.expirationSeconds ?? req.expirationSeconds;
    return { token: { token, expiresAt }, lifeMs: lifeSeconds * 1000 };
  }

  private lifeMs(e: CachedToken): number {
    return (e.token?.expiresAt.getTime() ?? 0) - e.issuedAt;
  }

  /** When the token is due: 80 % of its life or 24 h after it was issued, whichever is first, less the jitter. */
  private renewAt(e: CachedToken): number {
    return Math.min(e.issuedAt + MAX_TTL_MS, e.issuedAt + this.lifeMs(e) * 0.8) - e.jitterMs;
  }

  private requiresRenewal(e: CachedToken): boolean {
    const now = Date.now();
    // A clock that went back before the token was issued: its times cannot be trusted.
    return now >= this.renewAt(e) || now < e.issuedAt;
  }

  private expired(e: CachedToken): boolean {
    return !e.token || Date.now() >= e.token.expiresAt.getTime();
  }

  private schedule(e: CachedToken, delayMs: number): void {
    if (e.timer) clearTimeout(e.timer);
    e.timer = undefined;
    if (this.stopped || !this.opts.registered(e.req.pod.metadata.uid)) return;
    e.timer = setTimeout(() => void this.renewAhead(e), Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
    e.timer.unref?.();
  }

  /** The timed renewal of a registered pod's token. */
  private async renewAhead(e: CachedToken): Promise<void> {
    e.timer = undefined;
    if (this.cache.get(e.key) !== e || this.stopped) return;
    if (e.token && Date.now() < this.renewAt(e) && Date.now() >= e.issuedAt)
      return this.schedule(e, this.renewAt(e) - Date.now());
    const before = e.token;
    try {
      await this.renew(e);
    } catch (err) {
      if (this.cache.get(e.key) !== e) return;
      if (!e.failing) {
        e.failing = true;
        this.opts.logger.warn(
          this.expired(e)
            ? 'Service account token expired and cannot be renewed; retrying'
            : 'Service account token cannot be renewed; the old one is used until it expires',
          {
            token: describeRequest(e.req),
            err: describeError(err),
            ...(e.token ? { expires: e.token.expiresAt.toISOString() } : {}),
          },
        );
      }
      if (!this.opts.gate.usable) e.waitingForServer = true;
      else this.schedule(e, e.backoff.next());
      return;
    }
    if (e.token !== before && this.opts.registered(e.req.pod.metadata.uid))
      this.opts.onChange([e.req.pod.metadata.uid]);
  }

  private dropExpired(): void {
    for (const [key, e] of this.cache) {
      if (e.pending || !e.token || !this.expired(e)) continue;
      // A registered pod's token keeps being renewed; only one no one renews is dropped.
      if (e.timer || e.waitingForServer) continue;
      this.cache.delete(key);
    }
  }
}

function describeRequest(req: TokenRequestFor): string {
  const p = req.pod.metadata;
  return `serviceaccount ${p.namespace}/${req.serviceAccountName} of pod ${p.namespace}/${p.name} (audience ${req.audience || 'the API server'}, ${req.expirationSeconds}s)`;
}

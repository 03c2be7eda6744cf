// Bearer tokens through TokenReview, as the kubelet's webhook token authenticator does when
// authentication.webhook.enabled: answers (authenticated or not) are cached for
// authentication.webhook.cacheTTL, keyed by a hash of the token so that no token stays in memory;
// a review that fails is not cached.
import { createHash } from 'node:crypto';
import type { TokenReview } from 'kubernetes-types/authentication/v1';
import type { ReviewClient } from './review-client.js';
import { TtlCache } from './ttl-cache.js';
import type { UserInfo } from './user.js';

export const TOKEN_REVIEW_PATH = '/apis/authentication.k8s.io/v1/tokenreviews';
const MAX_CACHED_TOKENS = 4096;

export class TokenReviewAuthenticator {
  private readonly cache: TtlCache<UserInfo | null>;

  constructor(
    private readonly client: ReviewClient,
    private readonly ttlMs: number,
    now: () => number = Date.now,
  ) {
    this.cache = new TtlCache(MAX_CACHED_TOKENS, now);
  }

  /** The user, or undefined when the server says the token is not valid. Rejects when it cannot be asked. */
  async authenticate(token: string): Promise<UserInfo | undefined> {
    const key = createHash('sha256').update(token).digest('base64');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached ?? undefined;
    const review = await this.client.create<TokenReview>(TOKEN_REVIEW_PATH, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    const status = review.status;
    let user: UserInfo | null = null;
    if (status?.authenticated && status.user?.username) {
      user = {
        name: status.user.username,
        uid: status.user.uid,
        groups: status.user.groups ?? [],
        extra: status.user.extra,
      };
    } else if (status?.error) {
      // An error the server reports is a failure to decide, not a "no": not cached.
      throw new Error(`TokenReview: ${status.error}`);
    }
    this.cache.set(key, user, this.ttlMs);
    return user ?? undefined;
  }
}

// authorization.mode: Webhook: one SubjectAccessReview per distinct question, the answer cached for
// cacheAuthorizedTTL when allowed and cacheUnauthorizedTTL when not (the kubelet's webhook
// authorizer). A review that fails is not cached and is never an "allow".
import type { SubjectAccessReview, SubjectAccessReviewSpec } from 'kubernetes-types/authorization/v1';
import type { ReviewClient } from './review-client.js';
import { TtlCache } from './ttl-cache.js';
import type { UserInfo } from './user.js';

export const SUBJECT_ACCESS_REVIEW_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const MAX_CACHED_DECISIONS = 8192;

export interface NodeAccess {
  verb: string;
  subresource: string;
}

export interface Authorizer {
  /** true: allowed; false: denied or no opinion. Rejects when no decision could be made. */
  authorize(user: UserInfo, access: NodeAccess): Promise<boolean>;
}

export const alwaysAllow: Authorizer = { authorize: () => Promise.resolve(true) };

export interface WebhookAuthorizerOptions {
  nodeName: string;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  now?: () => number;
}

export class WebhookAuthorizer implements Authorizer {
  private readonly cache: TtlCache<boolean>;

  constructor(
    private readonly client: ReviewClient,
    private readonly o: WebhookAuthorizerOptions,
  ) {
    this.cache = new TtlCache(MAX_CACHED_DECISIONS, o.now ?? Date.now);
  }

  async authorize(user: UserInfo, access: NodeAccess): Promise<boolean> {
    const spec: SubjectAccessReviewSpec = {
      resourceAttributes: {
        namespace: '',
        verb: access.verb,
        group: '',
        version: 'v1',
        resource: 'nodes',
        subresource: access.subresource,
        name: this.o.nodeName,
      },
      user: user.name,
      groups: [...user.groups],
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.extra ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) } : {}),
    };
    const key = JSON.stringify(spec);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const review = await this.client.create<SubjectAccessReview>(SUBJECT_ACCESS_REVIEW_PATH, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec,
    });
    const allowed = review.status?.allowed === true && review.status.denied !== true;
    this.cache.set(key, allowed, allowed ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs);
    return allowed;
  }
}

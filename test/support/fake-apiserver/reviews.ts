// TokenReview and SubjectAccessReview, as the kubelet's webhooks call them: a token is looked up in
// the fake's token table (bootstrap and test tokens), an access question is answered by the same
// rules the fake applies to its own requests (authz.ts, with the test's grants).
import { API_AUDIENCES, lookupToken, type TokenEntry, type TokenTable, type UserInfo } from './authn.js';
import { authorize, type Grants } from './authz.js';
import type { ResourceRequest } from './request-info.js';
import { findResource } from './resources.js';
import type { ObjectStore } from './store.js';
import { badRequest } from './status.js';
import { arr, obj, str, type JsonObject } from './types.js';

export interface ReviewRecord {
  kind: 'TokenReview' | 'SubjectAccessReview';
  /** The reviewing client (the kubelet). */
  by: string;
  spec: JsonObject;
  allowed: boolean;
}

export function tokenReview(body: JsonObject, tokens: TokenTable): JsonObject {
  const token = str(obj(body.spec).token);
  if (!token) throw badRequest('TokenReview: spec.token is required');
  const asked = arr(obj(body.spec).audiences)
    .map((a) => str(a))
    .filter(Boolean);
  const wanted = asked.length ? asked : API_AUDIENCES;
  const user = lookupToken(tokens, token, wanted);
  const status: JsonObject = user ? { authenticated: true, user: reviewedUser(user) } : { authenticated: false };
  // The audiences the token is good for among those asked about.
  if (user?.audiences) status.audiences = wanted.filter((a) => user.audiences?.includes(a));
  return {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    metadata: { creationTimestamp: null },
    spec: obj(body.spec),
    status,
  };
}

function reviewedUser(user: TokenEntry): JsonObject {
  const out: JsonObject = { username: user.name, groups: [...user.groups, 'system:authenticated'] };
  if (user.uid) out.uid = user.uid;
  if (user.extra) out.extra = user.extra;
  return out;
}

export function subjectAccessReview(
  body: JsonObject,
  grants: Grants,
  store?: ObjectStore,
): { review: JsonObject; allowed: boolean } {
  const spec = obj(body.spec);
  const ra = obj(spec.resourceAttributes);
  const user: UserInfo = {
    name: str(spec.user),
    groups: Array.isArray(spec.groups) ? spec.groups.map((g) => str(g)) : [],
  };
  const rt = findResource(str(ra.group), str(ra.version) || 'v1', str(ra.resource));
  let allowed = false;
  let reason = '';
  if (rt) {
    const info: ResourceRequest = {
      kind: 'resource',
      verb: str(ra.verb) as ResourceRequest['verb'],
      rt,
      namespace: str(ra.namespace),
      name: str(ra.name),
      subresource: str(ra.subresource),
      query: new URLSearchParams(),
    };
    const denied = authorize(user, info, grants, store);
    allowed = denied === undefined;
    reason = denied ? denied.message : 'allowed by the fake API server';
  } else reason = 'no such resource';
  const status: JsonObject = { allowed, ...(allowed ? {} : { reason }) };
  return {
    review: {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      metadata: { creationTimestamp: null },
      spec,
      status,
    },
    allowed,
  };
}

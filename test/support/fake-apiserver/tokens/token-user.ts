// What an issued service account token authenticates as, and for how long: the service account's
// user and groups with the extra the real authenticator adds (credential id, pod, node), valid while
// the token has not expired and its service account and bound pod still exist with their UIDs (a pod
// being deleted counts for the validator's 60 s leeway).
import type { TokenEntry } from '../authn.js';
import type { ObjectStore } from '../store.js';
import { meta, str } from '../types.js';
import type { ServiceAccountClaims } from './service-account-jwt.js';

const LEEWAY_MS = 60_000;

export function tokenUser(store: ObjectStore, claims: ServiceAccountClaims, podBound: boolean): TokenEntry {
  const k8s = claims['kubernetes.io'];
  const { namespace } = k8s;
  const extra: Record<string, string[]> = { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] };
  if (k8s.pod) {
    extra['authentication.kubernetes.io/pod-name'] = [k8s.pod.name];
    extra['authentication.kubernetes.io/pod-uid'] = [k8s.pod.uid];
  }
  if (k8s.node) {
    extra['authentication.kubernetes.io/node-name'] = [k8s.node.name];
    if (k8s.node.uid) extra['authentication.kubernetes.io/node-uid'] = [k8s.node.uid];
  }
  return {
    name: claims.sub,
    uid: k8s.serviceaccount.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
    extra,
    audiences: claims.aud,
    valid: () => {
      if (Date.now() >= claims.exp * 1000) return false;
      const sa = store.get('serviceaccounts', namespace, k8s.serviceaccount.name);
      if (!sa || meta(sa).uid !== k8s.serviceaccount.uid) return false;
      if (!podBound || !k8s.pod) return true;
      const pod = store.get('pods', namespace, k8s.pod.name);
      if (!pod || meta(pod).uid !== k8s.pod.uid) return false;
      const deleting = str(pod.metadata.deletionTimestamp);
      return !deleting || Date.parse(deleting) > Date.now() - LEEWAY_MS;
    },
  };
}

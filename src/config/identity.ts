// Static pod identity as the kubelet gives it (reference §1.5): a content hash as UID, the node name
// as a name suffix, the config annotations, the NoExecute toleration and phase Pending.
//
// The hash: SHA-256 truncated to 128 bits (32 lowercase hex characters). The kubelet uses FNV-1a 128
// over a Go deep-print, which cannot be reproduced byte for byte here anyway, so nothing is gained by
// copying the hash function; SHA-256 is native in node:crypto and has no practical collisions.
// Its input is a canonical (sorted keys, no whitespace) JSON of the decoded, scheme-defaulted pod,
// then `host:<node>` and `file:<path>`, so formatting never matters and content, node and path do.
import { createHash } from 'node:crypto';
import type { Pod, Toleration } from 'kubernetes-types/core/v1';
import type { StaticPod } from './types';
import { CONFIG_HASH, CONFIG_SEEN, CONFIG_SOURCE } from '../k8s/annotations.js';
import { formatRfc3339Nano } from '../util/api-time.js';

/** JSON with object keys sorted at every level, so key order in the file does not matter. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The UID of a defaulted pod (before the namespace default, as the kubelet) on a node, from a file. */
export function computeStaticPodUid(defaulted: Pod, nodeName: string, file: string): string {
  return createHash('sha256')
    .update(canonicalJson(defaulted))
    .update(`host:${nodeName}`)
    .update(`file:${file}`)
    .digest('hex')
    .slice(0, 32);
}

/** The UID of a pod from staticPodURL: as the kubelet, its content and the URL, not the node. */
export function computeHttpPodUid(defaulted: Pod, url: string): string {
  return createHash('sha256').update(canonicalJson(defaulted)).update(`url:${url}`).digest('hex').slice(0, 32);
}

/** Where a static pod comes from: a manifest file, or the HTTP source (staticPodURL). */
export type PodOrigin = { readonly kind: 'file' } | { readonly kind: 'http'; readonly url: string };

export function staticPodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

// config.seen: RFC 3339 with a nine-digit fraction, as Go's RFC3339Nano reads it; util/api-time.ts
// owns the format (re-exported for the sources that stamp it).
export { formatRfc3339Nano };

const NO_EXECUTE_ALL: Toleration = { operator: 'Exists', effect: 'NoExecute' };

function withNoExecuteToleration(tolerations: readonly Toleration[] | undefined): Toleration[] {
  const list = [...(tolerations ?? [])];
  const present = list.some(
    (t) => t.operator === 'Exists' && t.effect === 'NoExecute' && !t.key && t.tolerationSeconds === undefined,
  );
  if (!present) list.push({ ...NO_EXECUTE_ALL });
  return list;
}

export interface IdentityInput {
  /**
   * The decoded, scheme-defaulted pod; not modified, but its nested objects become the result's
   * (no copy: its one caller, completeManifest, passes applySchemeDefaults' fresh copy, and a second
   * deep copy of every manifest was ~4% of the CPU a flood spent loading manifests).
   */
  readonly defaulted: Pod;
  readonly nodeName: string;
  /** Absolute path of the manifest: part of the UID. */
  readonly file: string;
  /** When this UID was seen; becomes `kubernetes.io/config.seen`. */
  readonly seen: Date;
  /** Default: a file (`file` is its path). For http, `file` is the URL the pod came from. */
  readonly origin?: PodOrigin;
}

export function applyIdentity({
  defaulted,
  nodeName,
  file,
  seen,
  origin = { kind: 'file' },
}: IdentityInput): StaticPod {
  // A pinned uid is kept as written (it may be an RFC 4122 UUID rather than 32 hex), as the kubelet does.
  const pinned = defaulted.metadata?.uid;
  const http = origin.kind === 'http';
  const uid = pinned
    ? pinned
    : http
      ? computeHttpPodUid(defaulted, origin.url)
      : computeStaticPodUid(defaulted, nodeName, file);
  const pod = defaulted;
  const meta = pod.metadata ?? {};
  const name = staticPodName(meta.name ?? '', nodeName);
  const namespace = meta.namespace || 'default';
  const annotations: Record<string, string> = {
    ...(meta.annotations ?? {}),
    [CONFIG_HASH]: uid,
    [CONFIG_SEEN]: formatRfc3339Nano(seen),
    [CONFIG_SOURCE]: origin.kind,
  };
  const spec = pod.spec ?? { containers: [] };
  const out = {
    ...pod,
    metadata: { ...meta, name, namespace, uid, annotations },
    // The NoExecute toleration is the file source's alone, as in the kubelet.
    spec: { ...spec, nodeName, ...(http ? {} : { tolerations: withNoExecuteToleration(spec.tolerations) }) },
    status: { ...(pod.status ?? {}), phase: 'Pending' },
  };
  return { pod: out, uid, key: `${namespace}/${name}`, file, ...(pinned ? { uidPinned: true as const } : {}) };
}

/**
 * The same pod under the UID of a running pod a kubelet started from the same content: metadata.uid
 * and config.hash change, the key does not, and `computedUid` remembers the UID bootlet gave it.
 */
export function withAdoptedUid(sp: StaticPod, uid: string): StaticPod {
  const meta = sp.pod.metadata;
  return {
    ...sp,
    uid,
    computedUid: sp.computedUid ?? sp.uid,
    pod: { ...sp.pod, metadata: { ...meta, uid, annotations: { ...meta.annotations, [CONFIG_HASH]: uid } } },
  };
}

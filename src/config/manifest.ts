// One manifest's bytes -> a static pod or the reason it was refused:
// parse (bounded) -> decode as the API machinery does -> defaults -> semantic rules -> the fields
// bootlet does not honour -> identity.
// The first two stages are the costly ones, and run in a worker thread for big files
// (decode-off-thread.ts); the rest works on a decoded pod that is bounded in size.
import type { ManifestError, StaticPod } from './types';
import { decodeManifest, type DecodedManifest } from './decode/decode-manifest';
import { applySchemeDefaults } from '../k8s/defaults.js';
import { validateSemantic } from './validate-semantic';
import { unhonouredFields } from './unhonoured-fields';
import { applyIdentity, staticPodName, type PodOrigin } from './identity';

export type { DecodedManifest };

export type LoadResult = { readonly pod: StaticPod; readonly warnings: string[] } | { readonly error: ManifestError };

/** The key a static pod of this name and namespace gets on `nodeName` (the namespace defaults as in applyIdentity). */
export function staticPodKey(name: string, namespace: string | undefined, nodeName: string): string {
  return `${namespace || 'default'}/${staticPodName(name, nodeName)}`;
}

/** Defaults, rules and identity for a decoded pod from `file` (or, for http, the URL) on `nodeName`. */
export function completeManifest(
  file: string,
  decoded: DecodedManifest,
  nodeName: string,
  now: Date,
  origin?: PodOrigin,
): LoadResult {
  if (!decoded.ok) {
    const { ok: _ok, claims, ...error } = decoded;
    return {
      error: { file, ...error, ...(claims ? { podKey: staticPodKey(claims.name, claims.namespace, nodeName) } : {}) },
    };
  }
  const defaulted = applySchemeDefaults(decoded.pod);
  const name = defaulted.metadata?.name;
  const problems = validateSemantic(defaulted, name ? staticPodName(name, nodeName) : undefined);
  // Valid, but asking for what bootlet does not do: refused with the reason the kubelet would give.
  if (problems.length === 0)
    problems.push(...unhonouredFields(defaulted).map((f) => `${f.path}: ${f.reason}: ${f.message}`));
  if (problems.length > 0) {
    const podKey = name ? staticPodKey(name, defaulted.metadata?.namespace, nodeName) : undefined;
    return { error: { file, message: problems.join('; '), ...(podKey ? { podKey } : {}) } };
  }
  return { pod: applyIdentity({ defaulted, nodeName, file, seen: now, origin }), warnings: decoded.warnings };
}

export function loadManifest(file: string, bytes: Buffer | string, nodeName: string, now: Date): LoadResult {
  return completeManifest(file, decodeManifest(bytes), nodeName, now);
}

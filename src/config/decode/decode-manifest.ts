// Parse and decode: the part of loading a manifest that depends only on its bytes, and the costly
// one. It runs on the event loop for small files and in a worker thread for big ones
// (decode-off-thread.ts), so it imports nothing beyond the parser and the decoder.
import type { Pod } from 'kubernetes-types/core/v1';
import { parseManifest } from '../parse';
import { decodePod } from './decode-pod';
import { errorMessage } from '../../util/error-message';

/** Why a manifest or an HTTP source's answer did not decode: where the parser stopped, or a size limit hit. */
interface DecodeFailure {
  readonly ok: false;
  readonly message: string;
  readonly line?: number;
  readonly column?: number;
  readonly limit?: true;
}

/** What decoding gives: a pod and its warnings, or the error. Plain data, so it can cross a thread. */
export type DecodedManifest =
  | { readonly ok: true; readonly pod: Pod; readonly warnings: string[] }
  | (DecodeFailure & {
      /** The pod the file declares, when it parsed far enough to say (metadata.name, metadata.namespace). */
      readonly claims?: { readonly name: string; readonly namespace?: string };
    });

/** Unknown fields named one by one up to this many, then counted. */
const MAX_WARNINGS = 20;

function capWarnings(warnings: string[]): string[] {
  if (warnings.length <= MAX_WARNINGS) return warnings;
  return [...warnings.slice(0, MAX_WARNINGS), `and ${warnings.length - MAX_WARNINGS} more unknown fields`];
}

/**
 * The pod a parsed but undecodable file still names: a pod an earlier agent may be running from it,
 * which must not be stopped while the file is refused.
 */
function claimedPod(object: Record<string, unknown>): { name: string; namespace?: string } | undefined {
  const meta = object.metadata;
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) return undefined;
  const { name, namespace } = meta as Record<string, unknown>;
  if (typeof name !== 'string' || name === '') return undefined;
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') return undefined;
  return namespace ? { name, namespace } : { name };
}

export function decodeManifest(bytes: Buffer | string): DecodedManifest {
  const parsed = parseManifest(bytes);
  if (!parsed.ok) return { ok: false, ...parsed.error };
  const claims = claimedPod(parsed.object);
  const withClaim = claims ? { claims } : {};
  try {
    const decoded = decodePod(parsed.object);
    if (!decoded.pod) return { ok: false, message: decoded.errors.join('; '), ...withClaim };
    return { ok: true, pod: decoded.pod, warnings: capWarnings(decoded.warnings) };
  } catch (err) {
    if (err instanceof Error && err.name === 'LimitError')
      return { ok: false, message: err.message, limit: true, ...withClaim };
    return { ok: false, message: `could not decode: ${errorMessage(err)}`, ...withClaim };
  }
}

/** What decoding an HTTP source's answer gives: its pods (a Pod, or a PodList's items), or the error. */
export type DecodedPodSet =
  | {
      readonly ok: true;
      readonly list: boolean;
      readonly pods: Array<{ readonly pod: Pod; readonly warnings: string[] }>;
    }
  | DecodeFailure;

function decodeItem(o: Record<string, unknown>): { pod: Pod; warnings: string[] } | { error: string } {
  try {
    const decoded = decodePod(o);
    if (!decoded.pod) return { error: decoded.errors.join('; ') };
    return { pod: decoded.pod, warnings: capWarnings(decoded.warnings) };
  } catch (err) {
    if (err instanceof Error && err.name === 'LimitError') return { error: err.message };
    return { error: `could not decode: ${errorMessage(err)}` };
  }
}

/** A Pod or a v1 PodList; one item that cannot be decoded refuses the whole answer, as in the kubelet. */
export function decodePodOrList(bytes: Buffer | string): DecodedPodSet {
  const parsed = parseManifest(bytes, true);
  if (!parsed.ok) return { ok: false, ...parsed.error };
  const o = parsed.object;
  if (o.kind === 'Pod') {
    const one = decodeItem(o);
    return 'error' in one ? { ok: false, message: one.error } : { ok: true, list: false, pods: [one] };
  }
  const items = Array.isArray(o.items) ? (o.items as unknown[]) : [];
  const pods: Array<{ pod: Pod; warnings: string[] }> = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      return { ok: false, message: `items[${i}]: must be a Pod object` };
    const it = item as Record<string, unknown>;
    if ((it.kind !== undefined && it.kind !== 'Pod') || (it.apiVersion !== undefined && it.apiVersion !== 'v1'))
      return { ok: false, message: `items[${i}]: expected a v1 Pod` };
    const one = decodeItem({ ...it, kind: 'Pod', apiVersion: 'v1' });
    if ('error' in one) return { ok: false, message: `items[${i}]: ${one.error}` };
    pods.push(one);
  }
  return { ok: true, list: true, pods };
}

// Parse and decode: the part of loading a manifest that depends only on its bytes, and the costly
// one. It runs on the event loop for small files and in a worker thread for big ones
// (decode-off-thread.ts), so it imports nothing beyond the parser and the decoder.
import type { Pod } from 'kubernetes-types/core/v1';
import { parseManifest } from '../parse';
import { decodePod } from './decode-pod';

/** What decoding gives: a pod and its warnings, or the error. Plain data, so it can cross a thread. */
export type DecodedManifest =
  | { readonly ok: true; readonly pod: Pod; readonly warnings: string[] }
  | {
      readonly ok: false;
      readonly message: string;
      readonly line?: number;
      readonly column?: number;
      readonly limit?: true;
      /** The pod the file declares, when it parsed far enough to say (metadata.name, metadata.namespace). */
      readonly claims?: { readonly name: string; readonly namespace?: string };
    };

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
    if (err instanceof Error && err.name === 'LimitError') return { ok: false, message: `refused: ${err.message}`, limit: true, ...withClaim };
    return { ok: false, message: `could not decode: ${err instanceof Error ? err.message : String(err)}`, ...withClaim };
  }
}


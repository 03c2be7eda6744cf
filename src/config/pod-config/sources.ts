// The pod sources of the one desired set, the order in which they win a clash of one pod key, and
// which of them make static pods (the node's own, mirrored to the API server).
import { isMirrorPod, STATIC_SOURCES as STATIC_CONFIG_SOURCES } from '../../k8s/annotations.js';
import type { StaticPod } from '../types';

/** The kubelet's kubetypes.FileSource, HTTPSource and ApiserverSource. */
export type SourceName = 'file' | 'http' | 'api';

/** Earlier wins a clash of key or UID: a node's own files over a remote answer, both over the API server. */
export const SOURCE_PRIORITY: readonly SourceName[] = ['file', 'http', 'api'];

/** Sources whose pods exist only because this node read them: they get mirror pods. */
export const STATIC_SOURCES: ReadonlySet<SourceName> = new Set([...STATIC_CONFIG_SOURCES].filter(isSourceName));

/** How a held pod's source is named in the log. */
export const SOURCE_LABEL: Readonly<Record<SourceName, string>> = {
  file: 'the manifest path',
  http: 'staticPodURL',
  api: 'the API server',
};

/**
 * A mirror pod the API server lists for this node is the API's picture of a static pod, not an API
 * pod: it is never desired, and so never clashes with the static pod of the same name.
 */
export function isMirrorOfStaticPod(source: SourceName, p: StaticPod): boolean {
  return source === 'api' && isMirrorPod(p.pod);
}

export function isSourceName(s: string | undefined): s is SourceName {
  return s === 'file' || s === 'http' || s === 'api';
}

/** The sources that share a slot, in priority order. */
export const SLOT_SOURCES: readonly (readonly SourceName[])[] = [['file', 'http'], ['api']];

// The clash rules between sources, as one pure function: which source's pod is desired under each
// key. Within a source, clashes are the source's own (files: pod-config/file-pods.ts; the http
// answer: its first pod of a name).
import type { StaticPod } from '../types';
import { isMirrorOfStaticPod, SOURCE_PRIORITY, type SourceName } from './sources';

export interface DesiredEntry {
  readonly source: SourceName;
  readonly pod: StaticPod;
}

/** A pod held back because an earlier source has its key, or its UID under another key. */
export interface ShadowedPod {
  readonly source: SourceName;
  readonly pod: StaticPod;
  readonly by: DesiredEntry;
  readonly why: 'key' | 'uid';
}

export interface Merged {
  readonly winners: Map<string, DesiredEntry>;
  readonly shadowed: ShadowedPod[];
}

/**
 * Sources in priority order, keys in code-unit order: the first pod of a key wins it, and a pod
 * whose UID a winner already has is held back too (two pods with one UID would share a worker, a
 * pod directory and their runtime objects).
 */
export function mergeSources(bySource: ReadonlyMap<SourceName, ReadonlyMap<string, StaticPod>>): Merged {
  const winners = new Map<string, DesiredEntry>();
  const byUid = new Map<string, DesiredEntry>();
  const shadowed: ShadowedPod[] = [];
  for (const source of SOURCE_PRIORITY) {
    const pods = bySource.get(source);
    if (!pods) continue;
    for (const key of [...pods.keys()].sort()) {
      const pod = pods.get(key)!;
      if (isMirrorOfStaticPod(source, pod)) continue;
      const byKey = winners.get(key);
      const sameUid = byUid.get(pod.uid);
      if (byKey) shadowed.push({ source, pod, by: byKey, why: 'key' });
      else if (sameUid) shadowed.push({ source, pod, by: sameUid, why: 'uid' });
      else {
        const entry = { source, pod };
        winners.set(key, entry);
        byUid.set(pod.uid, entry);
      }
    }
  }
  return { winners, shadowed };
}

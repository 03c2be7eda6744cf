// The clash rules between sources, for one pod key at a time: which source's pod is desired under
// it. Within a source, clashes are the source's own (files: pod-config/file-pods.ts; the http
// answer: its first pod of a name).
import type { StaticPod } from '../types';
import { isMirrorOfStaticPod, SOURCE_PRIORITY, type SourceName } from './sources';

export interface DesiredEntry {
  readonly source: SourceName;
  readonly pod: StaticPod;
}

/** A pod held back because an earlier source has its key, or another key's desired pod has its UID. */
export interface ShadowedPod {
  readonly source: SourceName;
  readonly pod: StaticPod;
  readonly by: DesiredEntry;
  readonly why: 'key' | 'uid';
}

/** The pods of every source under one key, in priority order; a mirror pod from the API server is none. */
export function candidatesOf(
  bySource: ReadonlyMap<SourceName, ReadonlyMap<string, StaticPod>>,
  key: string,
): DesiredEntry[] {
  const out: DesiredEntry[] = [];
  for (const source of SOURCE_PRIORITY) {
    const pod = bySource.get(source)?.get(key);
    if (pod && !isMirrorOfStaticPod(source, pod)) out.push({ source, pod });
  }
  return out;
}

/**
 * The earliest source wins the key. A candidate whose UID another key's desired pod already has is
 * held back until that pod goes (two pods with one UID would share a worker, a pod directory and
 * their runtime objects): the pod that had the UID first keeps it.
 */
export function chooseWinner(
  candidates: readonly DesiredEntry[],
  uidTakenBy: (uid: string) => DesiredEntry | undefined,
): { winner?: DesiredEntry; shadowed: ShadowedPod[] } {
  let winner: DesiredEntry | undefined;
  const shadowed: ShadowedPod[] = [];
  for (const c of candidates) {
    if (winner) {
      shadowed.push({ ...c, by: winner, why: 'key' });
      continue;
    }
    const holder = uidTakenBy(c.pod.uid);
    if (holder) shadowed.push({ ...c, by: holder, why: 'uid' });
    else winner = c;
  }
  return { winner, shadowed };
}

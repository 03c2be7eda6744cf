// The file source's pods, per file and per pod key, and the ADD/UPDATE/REMOVE diffs it feeds the pod config.
//
// Rules (where bootlet differs from the kubelet on purpose):
// - A file keeps its last good pod while its content is broken: a bad edit is not a deletion (the
//   kubelet removes the pod on the next relist, reference §1.3).
// - Two files declaring the same key: the first file by name wins, whatever order the events came
//   in; the other is refused with an error naming both, and takes over when the winner goes away
//   (the kubelet lets the later-sorting file win on relist and flips on every event, §2.5).
import type { ManifestError, PodUpdate, StaticPod } from '../types';
import { CONFIG_SEEN, canonicalJson } from '../identity';

export interface DesiredChange {
  readonly updates: PodUpdate[];
  /** Files refused because another file already declares their pod key. */
  readonly errors: ManifestError[];
}

/** The pod without the annotation that records when it was first seen: its comparable content. */
function contentOf(p: StaticPod): string {
  const { [CONFIG_SEEN]: _seen, ...annotations } = p.pod.metadata.annotations;
  return canonicalJson({ ...p.pod, metadata: { ...p.pod.metadata, annotations } });
}

export function sameStaticPod(a: StaticPod, b: StaticPod): boolean {
  // Unchanged files keep their stored object: most rescans compare a pod with itself.
  if (a === b) return true;
  return a.uid === b.uid && a.file === b.file && contentOf(a) === contentOf(b);
}

const OP_ORDER: Record<PodUpdate['op'], number> = { REMOVE: 0, ADD: 1, UPDATE: 2 };

export class FilePods {
  /** The last good pod of every file, including files that lose a key conflict. */
  private readonly byFile = new Map<string, StaticPod>();
  /** What downstream has been told: key -> pod. */
  private readonly current = new Map<string, StaticPod>();
  /** Losing file -> the file that holds its key (or its pinned uid), and the error last reported. */
  private readonly losing = new Map<string, { winner: string; error: ManifestError }>();
  /** The files in name order, kept until a file comes or goes: every difference walks them in that order. */
  private sortedFiles: string[] | undefined;

  /** A file now holds this good pod. */
  setFile(pod: StaticPod): DesiredChange {
    this.putFile(pod);
    return this.reconcile();
  }

  /** A file is gone (or is no longer a manifest): its pod goes unless another file declares the key. */
  removeFile(file: string): DesiredChange {
    this.dropFile(file);
    return this.reconcile();
  }

  /**
   * setFile without computing the diff yet: a full scan puts every file first and reconciles once,
   * so the outcome (and what downstream sees) does not depend on which read finished first.
   */
  putFile(pod: StaticPod): void {
    const old = this.byFile.get(pod.file);
    if (old && sameStaticPod(old, pod)) return; // keeps the stored object, and its first-seen time
    if (!old) this.sortedFiles = undefined;
    this.byFile.set(pod.file, pod);
    // A changed file that still loses is reported again, so every edit gets its answer.
    this.losing.delete(pod.file);
  }

  dropFile(file: string): void {
    if (this.byFile.delete(file)) this.sortedFiles = undefined;
    this.losing.delete(file);
  }

  /** True when the file's pod is held back because an earlier file declares the same key. */
  isLosing(file: string): boolean {
    return this.losing.has(file);
  }

  /** The files held back by a conflict, with the error each was refused with. */
  losingErrors(): ManifestError[] {
    return [...this.losing.values()].map((l) => l.error);
  }

  /** Files whose last good pod is held (winning or not). */
  files(): string[] {
    return [...this.sorted()];
  }

  private sorted(): readonly string[] {
    return (this.sortedFiles ??= [...this.byFile.keys()].sort());
  }

  podOfFile(file: string): StaticPod | undefined {
    return this.byFile.get(file);
  }

  /** The desired pods, by key. */
  pods(): StaticPod[] {
    return [...this.current.values()];
  }

  /** Brings the desired set in line with the files and returns the difference. */
  reconcile(): DesiredChange {
    const winners = new Map<string, StaticPod>();
    const byUid = new Map<string, StaticPod>();
    const losers: Array<{ pod: StaticPod; winner: StaticPod; why: 'key' | 'uid' }> = [];
    // Plain code-unit order, like the kubelet's sort.Strings over the directory listing.
    for (const file of this.sorted()) {
      const pod = this.byFile.get(file)!;
      const winner = winners.get(pod.key);
      // Two pods with one UID (two files pinning the same metadata.uid) would share a pod worker,
      // a pod directory and their runtime objects: the later file is refused.
      const sameUid = byUid.get(pod.uid);
      if (winner) losers.push({ pod, winner, why: 'key' });
      else if (sameUid) losers.push({ pod, winner: sameUid, why: 'uid' });
      else {
        winners.set(pod.key, pod);
        byUid.set(pod.uid, pod);
      }
    }

    const errors: ManifestError[] = [];
    const stillLosing = new Set<string>();
    for (const { pod, winner, why } of losers) {
      stillLosing.add(pod.file);
      if (this.losing.get(pod.file)?.winner === winner.file) continue;
      const clash = why === 'key' ? `pod ${pod.key} is already declared by ${winner.file}` : `pod uid ${pod.uid} is already pinned by ${winner.file} (for ${winner.key})`;
      const error = { file: pod.file, message: `${clash}; ${pod.file} is ignored until that file is removed or declares another pod`, podKey: pod.key };
      this.losing.set(pod.file, { winner: winner.file, error });
      errors.push(error);
    }
    for (const file of [...this.losing.keys()]) if (!stillLosing.has(file)) this.losing.delete(file);

    const updates: PodUpdate[] = [];
    for (const [key, prev] of this.current) {
      if (!winners.has(key)) {
        updates.push({ op: 'REMOVE', pod: prev });
        this.current.delete(key);
      }
    }
    for (const [key, pod] of winners) {
      const prev = this.current.get(key);
      if (!prev) updates.push({ op: 'ADD', pod });
      else if (!sameStaticPod(prev, pod)) updates.push({ op: 'UPDATE', pod, previous: prev });
      else continue;
      this.current.set(key, pod);
    }
    updates.sort((a, b) => OP_ORDER[a.op] - OP_ORDER[b.op] || (a.pod.key < b.pod.key ? -1 : a.pod.key > b.pod.key ? 1 : 0));
    return { updates, errors };
  }
}

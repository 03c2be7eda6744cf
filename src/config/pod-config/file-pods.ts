// The file source's pods, per file and per pod key, and the ADD/UPDATE/REMOVE diffs it feeds the pod config.
//
// Rules (where bootlet differs from the kubelet on purpose):
// - A file keeps its last good pod while its content is broken: a bad edit is not a deletion (the
//   kubelet removes the pod on the next relist, reference §1.3).
// - Two files declaring the same key: the first file by name wins, whatever order the events came
//   in; the other is refused with an error naming both, and takes over when the winner goes away
//   (the kubelet lets the later-sorting file win on relist and flips on every event, §2.5).
import type { ManifestError, PodUpdate, StaticPod } from '../types';
import { CONFIG_SEEN } from '../../k8s/annotations.js';
import { canonicalJson } from '../identity';

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

/** Adds `file` to the set under `k` in `index`. */
function indexAdd(index: Map<string, Set<string>>, k: string, file: string): void {
  const files = index.get(k);
  if (files) files.add(file);
  else index.set(k, new Set([file]));
}

function indexDelete(index: Map<string, Set<string>>, k: string, file: string): void {
  const files = index.get(k);
  if (!files) return;
  files.delete(file);
  if (files.size === 0) index.delete(k);
}

/**
 * The files in name order decide each key's pod: a file loses to an earlier one with its key or
 * its UID. So a file's outcome depends only on the files it shares a key or a UID with (and on
 * theirs, and so on): a difference looks at the files that share one with a file changed since the
 * last, not at every file. A flood's removal of 2,000 files, told over a few dozen differences,
 * walked all of them each time (30-77 ms each, with the event loop held).
 */
export class FilePods {
  /** The last good pod of every file, including files that lose a key conflict. */
  private readonly byFile = new Map<string, StaticPod>();
  /** What downstream has been told: key -> pod. */
  private readonly current = new Map<string, StaticPod>();
  /** Losing file -> the file that holds its key (or its pinned uid), and the error last reported. */
  private readonly losing = new Map<string, { winner: string; error: ManifestError }>();
  /** The files whose pod has each key, and each UID. */
  private readonly filesByKey = new Map<string, Set<string>>();
  private readonly filesByUid = new Map<string, Set<string>>();
  /** Keys and UIDs of the pods put or dropped since the last difference (before and after). */
  private readonly dirtyKeys = new Set<string>();
  private readonly dirtyUids = new Set<string>();
  /** The files in name order, kept until a file comes or goes (a full scan walks them in that order). */
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
    if (old) this.unindex(old);
    else this.sortedFiles = undefined;
    this.byFile.set(pod.file, pod);
    this.index(pod);
    // A changed file that still loses is reported again, so every edit gets its answer.
    this.losing.delete(pod.file);
  }

  dropFile(file: string): void {
    const old = this.byFile.get(file);
    if (old) {
      this.unindex(old);
      this.byFile.delete(file);
      this.sortedFiles = undefined;
    }
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
    return [...(this.sortedFiles ??= [...this.byFile.keys()].sort())];
  }

  podOfFile(file: string): StaticPod | undefined {
    return this.byFile.get(file);
  }

  /** True when some file's pod has this UID (winning or not). */
  hasUid(uid: string): boolean {
    return this.filesByUid.has(uid);
  }

  /** The desired pods, by key. */
  pods(): StaticPod[] {
    return [...this.current.values()];
  }

  /** Brings the desired set in line with the files and returns the difference. */
  reconcile(): DesiredChange {
    const { keys, files } = this.affected();
    const winners = new Map<string, StaticPod>();
    const byUid = new Map<string, StaticPod>();
    const losers: Array<{ pod: StaticPod; winner: StaticPod; why: 'key' | 'uid' }> = [];
    // Plain code-unit order, like the kubelet's sort.Strings over the directory listing.
    for (const file of files.sort()) {
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
      const clash =
        why === 'key'
          ? `pod ${pod.key} is already declared by ${winner.file}`
          : `pod uid ${pod.uid} is already pinned by ${winner.file} (for ${winner.key})`;
      const error = {
        file: pod.file,
        message: `${clash}; ${pod.file} is ignored until that file is removed or declares another pod`,
        podKey: pod.key,
      };
      this.losing.set(pod.file, { winner: winner.file, error });
      errors.push(error);
    }
    for (const file of files) if (!stillLosing.has(file)) this.losing.delete(file);

    const updates: PodUpdate[] = [];
    for (const key of keys) {
      const prev = this.current.get(key);
      const pod = winners.get(key);
      if (!pod) {
        if (!prev) continue;
        updates.push({ op: 'REMOVE', pod: prev });
        this.current.delete(key);
        continue;
      }
      if (!prev) updates.push({ op: 'ADD', pod });
      else if (!sameStaticPod(prev, pod)) updates.push({ op: 'UPDATE', pod, previous: prev });
      else continue;
      this.current.set(key, pod);
    }
    updates.sort(
      (a, b) => OP_ORDER[a.op] - OP_ORDER[b.op] || (a.pod.key < b.pod.key ? -1 : a.pod.key > b.pod.key ? 1 : 0),
    );
    return { updates, errors };
  }

  /**
   * The keys whose pod may have changed since the last difference, and every file that decides
   * them: the files sharing a key or a UID with a changed file, and so on until no new one comes.
   * Files outside share neither with any of these, so their outcome cannot have changed.
   */
  private affected(): { keys: Set<string>; files: string[] } {
    const keys = new Set(this.dirtyKeys);
    const uids = new Set(this.dirtyUids);
    this.dirtyKeys.clear();
    this.dirtyUids.clear();
    const files = new Set<string>();
    const keyQueue = [...keys];
    const uidQueue = [...uids];
    const reach = (file: string): void => {
      if (files.has(file)) return;
      files.add(file);
      const pod = this.byFile.get(file)!;
      if (!keys.has(pod.key)) (keys.add(pod.key), keyQueue.push(pod.key));
      if (!uids.has(pod.uid)) (uids.add(pod.uid), uidQueue.push(pod.uid));
    };
    while (keyQueue.length > 0 || uidQueue.length > 0) {
      for (let k = keyQueue.pop(); k !== undefined; k = keyQueue.pop())
        for (const f of this.filesByKey.get(k) ?? []) reach(f);
      for (let u = uidQueue.pop(); u !== undefined; u = uidQueue.pop())
        for (const f of this.filesByUid.get(u) ?? []) reach(f);
    }
    return { keys, files: [...files] };
  }

  private index(pod: StaticPod): void {
    indexAdd(this.filesByKey, pod.key, pod.file);
    indexAdd(this.filesByUid, pod.uid, pod.file);
    this.dirtyKeys.add(pod.key);
    this.dirtyUids.add(pod.uid);
  }

  private unindex(pod: StaticPod): void {
    indexDelete(this.filesByKey, pod.key, pod.file);
    indexDelete(this.filesByUid, pod.uid, pod.file);
    this.dirtyKeys.add(pod.key);
    this.dirtyUids.add(pod.uid);
  }
}

// Which names in the manifest directory are manifests.
//
// Deliberately different from the kubelet: it reads every name not starting with a dot, so an editor
// backup (`web.yaml~`, `web.yaml.bak`), a package manager leftover (`web.yaml.dpkg-old`,
// `web.yaml.rpmsave`) or a half-written temp file becomes a second definition of the same pod, which
// silently wins over the live manifest on the next relist (reference §2.5). bootlet never reads them.
import { basename } from 'node:path';

/** Why a name is not a manifest, or `undefined` when it is one. */
export function ignoredNameReason(file: string): string | undefined {
  return ignoredEntryReason(basename(file));
}

/** As ignoredNameReason, for the entry's own name (what a directory watch hears). */
export function ignoredEntryReason(name: string): string | undefined {
  if (name === '') return 'empty name';
  // Dotfiles include vim swap files (`.web.yaml.swp`) and emacs lock files (`.#web.yaml`).
  if (name.startsWith('.')) return 'hidden file (name starts with ".")';
  if (/\.sw[a-p]$/.test(name) || name.endsWith('.swx')) return 'editor swap file';
  if (name.endsWith('~')) return 'editor backup file (ends with "~")';
  if (name.startsWith('#') && name.endsWith('#')) return 'editor auto-save file (#...#)';
  if (/\.(tmp|bak|orig)$/i.test(name)) return 'temporary or backup file';
  if (/\.dpkg-[a-z]+$/.test(name)) return 'dpkg leftover (.dpkg-*)';
  if (/\.rpm[a-z]+$/.test(name)) return 'rpm leftover (.rpm*)';
  return undefined;
}

export type EntryKind = 'file' | 'directory' | 'other';

/** Classifies what stat (not lstat: symlinks are followed) says about an entry. */
export function entryKind(st: { isFile(): boolean; isDirectory(): boolean }): EntryKind {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  return 'other';
}

/**
 * Remembers which names were already reported so a skip is logged once per name, not per scan.
 * Bounded: a directory that fills with throw-away names (a runaway tool writing `.tmp` files) must
 * not grow the agent; past the cap the oldest names are forgotten (and may be logged once more).
 */
export class OnceSet {
  private readonly seen = new Set<string>();
  constructor(private readonly capacity = 1024) {}
  /** True the first time a key is seen. */
  first(key: string): boolean {
    if (this.seen.has(key)) return false;
    if (this.seen.size >= this.capacity) this.seen.delete(this.seen.values().next().value as string);
    this.seen.add(key);
    return true;
  }
  forget(key: string): void {
    this.seen.delete(key);
  }
  get size(): number {
    return this.seen.size;
  }
}

/** A file name as it can be shown in a log line: bytes that are not valid UTF-8 as \xNN. */
export function printableName(name: Buffer): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const b = name[i]!;
    out += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** True when the bytes of a file name are valid UTF-8 (Node's string paths can only name those). */
export function isUtf8Name(name: Buffer): boolean {
  return Buffer.from(name.toString('utf8'), 'utf8').equals(name);
}

// Reads a manifest so that a pod is never started from a half-written file: the bytes are taken only
// once the file has been quiet for a moment and a read saw no change (two reads that agree, unless
// the watcher vouches that nobody has written the file in place).
import { open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { entryKind, type EntryKind } from './ignore';
import { errorMessage } from '../util/error-message';

/** The kubelet reads manifests through a 10 MiB bounded reader; so do we. */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

export type ReadResult =
  /** `stat`: the file as it was around both agreeing reads. */
  | { readonly kind: 'ok'; readonly bytes: Buffer; readonly stat: Stats }
  /** A definite problem with the file (too large, empty, unreadable). */
  | { readonly kind: 'error'; readonly message: string }
  /** Still being written after all attempts: try again later, it is not an error yet. */
  | { readonly kind: 'changing' }
  | { readonly kind: 'missing' }
  | { readonly kind: 'not-file'; readonly what: Exclude<EntryKind, 'file'> };

export interface ReadOptions {
  /** Pause between the two reads that must agree. */
  readonly debounceMs?: number;
  /**
   * How long the file must have been left alone (ctime age) before it is read. ctime rather than
   * mtime because tools like rsync and tar set an old mtime on a file they just wrote, and nobody can
   * set ctime. This is what stops an in-place writer that pauses between two chunks from being read
   * at the pause.
   */
  readonly settleMs?: number;
  readonly maxAttempts?: number;
  readonly maxBytes?: number;
  /**
   * When the caller watches the directory: the time of the last write event seen for this file
   * (undefined: none seen). A file that was renamed into place and not written since is complete,
   * so it needs no settle time; that is what keeps an atomic save fast.
   */
  readonly lastWriteEventAt?: () => number | undefined;
  /** The clock file ages are measured with (ms since the epoch, as ctime); read once per attempt. */
  readonly now?: () => number;
  /** Why a file must not be read at all (it is the agent's own output, own-output.ts), if so. */
  readonly ownOutput?: (st: Stats) => string | undefined;
}

/** Pause before reading a quiet file again whose stat moved during the read. */
const QUIET_REREAD_MS = 2;

/**
 * How a Pod serialized by Kubernetes' own YAML writer (sigs.k8s.io/yaml: keys sorted, so `status`
 * comes last, and empty in a manifest) ends. kubeadm writes its manifests in place, in one write
 * (os.WriteFile); a fresh file that already ends so is that write's complete output, and need not
 * wait out the settle time, which was 80 of the ~150 ms from kubeadm's write to the first sandbox.
 * A writer cut short ends elsewhere, and still waits.
 */
const SERIALIZED_POD_END = Buffer.from('\nstatus: {}\n');
/** Only small files are read early: a manifest as kubeadm writes it is 2-4 KiB. */
const SERIALIZED_PEEK_MAX_BYTES = 256 * 1024;
/**
 * While a fresh small file waits out its settle time, the watcher's record of its last write is
 * checked this often: kubeadm's file is seen first empty (created, truncated) and then written, and
 * a wait begun at the empty file must not hold the written one for the whole settle time.
 */
const WRITE_CHECK_MS = 5;
/** Early wake-ups per read: a writer that never stops still gets the plain settle rule. */
const MAX_EARLY_WAKES = 50;

const sameStat = (a: Stats, b: Stats): boolean =>
  a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * Reads at most `limit` bytes; a result of length `limit` means "at least that many". The buffer
 * starts at the size stat gave (manifests are a few KiB; allocating the 10 MiB limit for each of
 * the two reads of every file on every rescan cost real CPU and memory) and grows if the file did.
 */
async function readBounded(file: string, limit: number, sizeHint: number): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(Math.min(limit, Math.max(sizeHint + 1, 4096)));
    let filled = 0;
    for (;;) {
      if (filled === buf.length) {
        if (buf.length >= limit) break;
        const bigger = Buffer.allocUnsafe(Math.min(limit, buf.length * 2));
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const asked = buf.length - filled;
      const { bytesRead } = await fh.read(buf, filled, asked, null);
      filled += bytesRead;
      // A short read of a regular file is its end: no further read to hear it say 0. (A file that
      // grows meanwhile is caught by the stat after the read.)
      if (bytesRead < asked) break;
    }
    return buf.subarray(0, filled);
  } finally {
    await fh.close();
  }
}

function endsSerialized(bytes: Buffer): boolean {
  return (
    bytes.length > SERIALIZED_POD_END.length &&
    bytes.subarray(bytes.length - SERIALIZED_POD_END.length).equals(SERIALIZED_POD_END)
  );
}

export async function readManifestFile(file: string, opts: ReadOptions = {}): Promise<ReadResult> {
  const debounceMs = opts.debounceMs ?? 15;
  const settleMs = opts.settleMs ?? 80;
  const maxAttempts = opts.maxAttempts ?? 12;
  const maxBytes = opts.maxBytes ?? MAX_MANIFEST_BYTES;
  const now = opts.now ?? Date.now;
  const tooLarge = `file is larger than the ${maxBytes / (1024 * 1024)} MiB limit`;
  let previous: Buffer | undefined;
  let earlyWakes = 0;
  /** Sleeps `ms`, or less when a new write of a small file is heard (true then). */
  const settle = async (ms: number, size: number, lastWrite: number | undefined): Promise<boolean> => {
    const watching = opts.lastWriteEventAt;
    if (!watching || size > SERIALIZED_PEEK_MAX_BYTES || earlyWakes >= MAX_EARLY_WAKES) {
      await sleep(ms);
      return false;
    }
    const until = Date.now() + ms;
    for (let left = ms; left > 0; left = until - Date.now()) {
      await sleep(Math.min(WRITE_CHECK_MS, left));
      if (watching() !== lastWrite) {
        earlyWakes++;
        return true;
      }
    }
    return false;
  };
  try {
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const before = await stat(file);
      const kind = entryKind(before);
      if (kind !== 'file') return { kind: 'not-file', what: kind };
      // Before its size or age: a log file is always large and fresh, and never to be waited for.
      const own = opts.ownOutput?.(before);
      if (own !== undefined) return { kind: 'error', message: own };
      if (before.size > maxBytes) return { kind: 'error', message: tooLarge };
      const t = now();
      const age = t - before.ctimeMs;
      const fresh = age >= 0 && age < settleMs;
      const lastWrite = opts.lastWriteEventAt?.();
      const quiet = opts.lastWriteEventAt !== undefined && (lastWrite === undefined || t - lastWrite >= settleMs);
      if (fresh && !quiet && before.size <= SERIALIZED_PEEK_MAX_BYTES && before.size > SERIALIZED_POD_END.length) {
        const bytes = await readBounded(file, maxBytes + 1, before.size);
        const after = await stat(file);
        // Whole, unchanged while read, and no write heard meanwhile.
        if (
          sameStat(before, after) &&
          bytes.length === after.size &&
          endsSerialized(bytes) &&
          opts.lastWriteEventAt?.() === lastWrite
        )
          return { kind: 'ok', bytes, stat: after };
      }
      if (fresh && !quiet) {
        // Until the write event is settleMs old too: it is stamped when the event loop hears it,
        // a few ms after the ctime, and waking at the ctime's settle found the file not yet quiet,
        // which cost two more reads and the debounce (~20 ms of every in-place write, as kubeadm's).
        const sinceWrite = lastWrite === undefined ? settleMs : Math.max(0, t - lastWrite);
        // A new write heard is a new look, not a spent attempt.
        if (await settle(settleMs - Math.min(age, sinceWrite) + 1, before.size, lastWrite)) attempt--;
        continue;
      }
      // Created but not yet written: the write (and its event) is still to come.
      if (fresh && before.size === 0) {
        if (await settle(settleMs - age + 1, 0, lastWrite)) attempt--;
        continue;
      }
      const gap = quiet ? QUIET_REREAD_MS : debounceMs;
      const bytes = await readBounded(file, maxBytes + 1, before.size);
      const after = await stat(file);
      if (bytes.length > maxBytes) return { kind: 'error', message: tooLarge };
      if (!sameStat(before, after)) {
        previous = undefined;
        await sleep(gap);
        continue;
      }
      // A quiet file (renamed into place, or its writer gone for settleMs) that did not change
      // during the read is complete; any other needs two reads that agree.
      if (quiet || (previous !== undefined && previous.equals(bytes))) {
        // A write event that arrived during the reads (the event loop ran while they were under
        // way) makes the file one being written after all: it must settle first.
        if (quiet && opts.lastWriteEventAt?.() !== lastWrite) {
          previous = undefined;
          continue;
        }
        if (bytes.length === 0) return { kind: 'error', message: 'file is empty' };
        return { kind: 'ok', bytes, stat: after };
      }
      previous = bytes;
      await sleep(gap);
    }
    return { kind: 'changing' };
  } catch (err) {
    if (isNotFound(err)) return { kind: 'missing' };
    return { kind: 'error', message: `cannot read file: ${errorMessage(err)}` };
  }
}

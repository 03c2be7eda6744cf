// `bootlet validate` for manifests: each file goes through exactly what the agent's file source
// does with it (the name rules of ignore.ts, the bounded stable read, parse and decode on or off the
// event loop, defaulting, the semantic rules, the static pod's identity for this node and path),
// and the files of one directory through the agent's duplicate rules (pod-config/file-pods.ts). Nothing a
// manifest names is run, pulled, mounted or connected to.
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createManifestDecoder, type ManifestDecoder } from '../decode/decode-off-thread';
import { FilePods } from '../pod-config/file-pods';
import { entryKind, ignoredNameReason, isUtf8Name, printableName } from '../ignore';
import { readManifestFile } from '../read-manifest';
import type { StaticPod } from '../types';
import { errorMessage } from '../../util/error-message';

export type FileCheck =
  | {
      readonly file: string;
      readonly result: 'accepted';
      readonly pod: string;
      readonly uid: string;
      readonly warnings: string[];
    }
  | {
      readonly file: string;
      readonly result: 'refused';
      readonly reason: string;
      readonly line?: number;
      readonly column?: number;
      readonly warnings: string[];
    }
  | { readonly file: string; readonly result: 'ignored'; readonly reason: string };

export interface CheckOptions {
  readonly nodeName: string;
  /** Files read at once; a directory of thousands is read in parallel, but not all at once. */
  readonly concurrency?: number;
}

/** A path that does not exist or cannot be looked at: a usage problem, not a manifest problem. */
export class PathError extends Error {}

const DEFAULT_CONCURRENCY = 32;

/** The message without the `line N, column M: ` the parser puts in front when it has a position. */
function withoutPosition(message: string, line?: number): string {
  return line === undefined ? message : message.replace(/^line \d+, column \d+: /, '');
}

async function checkFile(
  file: string,
  nodeName: string,
  decoder: ManifestDecoder,
  now: Date,
): Promise<{ check: FileCheck; pod?: StaticPod }> {
  // Nobody is writing the file while it is validated: no settle time, but the same bounded read.
  const r = await readManifestFile(file, { settleMs: 0, debounceMs: 0 });
  switch (r.kind) {
    case 'missing':
      return { check: { file, result: 'refused', reason: 'file disappeared while being read', warnings: [] } };
    case 'not-file':
      return {
        check: {
          file,
          result: 'ignored',
          reason:
            r.what === 'directory'
              ? 'sub-directory: the agent does not recurse into it'
              : 'not a regular file (fifo, socket or device)',
        },
      };
    case 'changing':
      return { check: { file, result: 'refused', reason: 'file kept changing while being read', warnings: [] } };
    case 'error':
      return { check: { file, result: 'refused', reason: r.message, warnings: [] } };
    case 'ok':
      break;
  }
  const loaded = await decoder.load(file, r.bytes, nodeName, now);
  if ('error' in loaded) {
    const e = loaded.error;
    return {
      check: {
        file,
        result: 'refused',
        reason: withoutPosition(e.message, e.line),
        line: e.line,
        column: e.column,
        warnings: [],
      },
    };
  }
  return {
    check: { file, result: 'accepted', pod: loaded.pod.key, uid: loaded.pod.uid, warnings: loaded.warnings },
    pod: loaded.pod,
  };
}

/** Runs `fn` over `items`, at most `n` at a time, results in the items' order. */
async function mapLimit<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

/** The entries of a manifest directory as the file source sees them: names, and names it cannot use. */
async function listDirectory(dir: string): Promise<{ files: string[]; unusable: FileCheck[] }> {
  const files: string[] = [];
  const unusable: FileCheck[] = [];
  for (const raw of await readdir(dir, { encoding: 'buffer' })) {
    if (isUtf8Name(raw)) files.push(join(dir, raw.toString('utf8')));
    else
      unusable.push({
        file: join(dir, printableName(raw)),
        result: 'refused',
        reason: 'the name is not valid UTF-8: the agent skips it; rename it',
        warnings: [],
      });
  }
  return { files: files.sort(), unusable };
}

/** The agent's duplicate rules over one directory's (or one command line's) accepted pods. */
function applyDuplicateRules(checks: FileCheck[], pods: ReadonlyMap<string, StaticPod>): void {
  const desired = new FilePods();
  for (const p of pods.values()) desired.putFile(p);
  const losers = new Map(desired.reconcile().errors.map((e) => [e.file, e.message]));
  for (let i = 0; i < checks.length; i++) {
    const c = checks[i]!;
    const clash = losers.get(c.file);
    if (c.result === 'accepted' && clash)
      checks[i] = { file: c.file, result: 'refused', reason: clash, warnings: c.warnings };
  }
}

/**
 * Checks files and directories as the agent would read them on `nodeName`. A directory is read as a
 * manifest directory (names the agent ignores are reported as ignored, with the reason); a file
 * named on its own is checked whatever its name, with a warning when the agent would skip that
 * name in a directory.
 */
export async function checkManifests(paths: readonly string[], opts: CheckOptions): Promise<FileCheck[]> {
  const decoder = createManifestDecoder();
  const now = new Date();
  const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
  const all: FileCheck[] = [];
  try {
    const groups: Array<{ files: string[]; explicit: boolean; pre: FileCheck[] }> = [];
    const loose: string[] = [];
    for (const p of paths) {
      const abs = resolve(p);
      let kind;
      try {
        kind = entryKind(await stat(abs));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        throw new PathError(
          `${abs}: ${code === 'ENOENT' || code === 'ENOTDIR' ? 'no such file or directory' : errorMessage(err)}`,
        );
      }
      if (kind === 'directory') {
        const { files, unusable } = await listDirectory(abs);
        groups.push({ files, explicit: false, pre: unusable });
      } else loose.push(abs);
    }
    if (loose.length > 0) groups.push({ files: loose, explicit: true, pre: [] });

    for (const g of groups) {
      const checks: FileCheck[] = [...g.pre];
      const pods = new Map<string, StaticPod>();
      const results = await mapLimit(g.files, concurrency, async (file): Promise<FileCheck> => {
        const skip = ignoredNameReason(file);
        if (skip !== undefined && !g.explicit) return { file, result: 'ignored', reason: skip };
        const { check, pod } = await checkFile(file, opts.nodeName, decoder, now);
        if (pod) pods.set(file, pod);
        if (skip !== undefined && check.result !== 'ignored')
          check.warnings.unshift(`in a manifest directory the agent would skip this file: ${skip}`);
        return check;
      });
      checks.push(...results);
      applyDuplicateRules(checks, pods);
      all.push(...checks);
    }
  } finally {
    await decoder.close();
  }
  return all;
}

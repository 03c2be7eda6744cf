// The API server's rules for a path inside a volume or under a root on the node (subPath, a
// downward API file, a seccomp localhost profile): relative and never stepping out. The node
// checks again where it writes (node/atomic-writer.ts, node/volumes.ts); these refuse the manifest.
import type { PathPart } from '../field-path';
import { invalid } from './field-errors';

/** A `..` element anywhere in the path. */
export const hasBackstep = (v: string): boolean => v.split('/').includes('..');

/** validatePathNoBacksteps: no `..` element (one message however many). */
export function noBacksteps(p: readonly PathPart[], v: string, out: string[]): void {
  if (hasBackstep(v)) out.push(invalid(p, v, "must not contain '..'"));
}

/** validateLocalDescendingPath: relative, and no `..` element. */
export function localDescendingPath(p: readonly PathPart[], v: string, out: string[]): void {
  if (v.startsWith('/')) out.push(invalid(p, v, 'must be a relative path'));
  noBacksteps(p, v, out);
}

/** ValidateLocalNonReservedPath: a descending path that does not start with `..` either (`..data` is the atomic writer's). */
export function localNonReservedPath(p: readonly PathPart[], v: string, out: string[]): void {
  localDescendingPath(p, v, out);
  if (v.startsWith('..') && !v.startsWith('../')) out.push(invalid(p, v, "must not start with '..'"));
}

// Which of two copies of one object is newer. resourceVersions are opaque to clients in general; from
// one etcd they are increasing integers, and that is what the agent's caches compare, so that a watch
// event that arrives late never undoes a newer write of our own. Anything else counts as newer.
import type { ApiObject } from './list-watch.js';

/** Whether `a` is at least as new as `b` (true when there is no `b`, or either version is not an integer). */
export function atLeastAsNew(a: ApiObject, b: ApiObject | undefined): boolean {
  if (!b) return true;
  const ra = a.metadata?.resourceVersion ?? '';
  const rb = b.metadata?.resourceVersion ?? '';
  if (/^\d+$/.test(ra) && /^\d+$/.test(rb)) return BigInt(ra) >= BigInt(rb);
  return true;
}

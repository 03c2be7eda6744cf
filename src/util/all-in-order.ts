/**
 * Runs side by side what once ran in turn, and fails as the turns did: with the first failure in the
 * given order, once every step has settled (so none is left running behind the error).
 */
export async function allInOrder<T>(ps: readonly Promise<T>[]): Promise<T[]> {
  const out: T[] = [];
  for (const r of await Promise.allSettled(ps)) {
    if (r.status === 'rejected') throw r.reason;
    out.push(r.value);
  }
  return out;
}

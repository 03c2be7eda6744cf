// CPU-heavy steps that many callers have ready at once (a flood of manifests, each to be parsed)
// take turns: one per turn of the event loop. Each turn's poll phase then serves what came in (a
// /healthz probe, the runtime's answers) between any two of them, rather than after all the steps
// that became ready in the same poll. A lone caller waits one setImmediate.
const waiting: Array<() => void> = [];
let granting = false;

/** Resolves at this caller's turn: the work after the await runs before the loop turns again. */
export function cpuTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!granting) {
      granting = true;
      setImmediate(grant);
    }
  });
}

function grant(): void {
  // The continuation runs in the microtasks right after this callback; an immediate set here runs
  // in the next turn, after its poll phase.
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(grant);
  else granting = false;
}

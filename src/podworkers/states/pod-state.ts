// A pod worker's state and the moves it may make (krustlet's per-pod state machine, in types):
// each state names the states it may move to, and a step that returns any other fails to compile.
import type { PodWorkerStateName, WorkerContext } from '../worker-context.js';

/** The states that run a step; Done is where a worker ends. */
export type RunnableStateName = Exclude<PodWorkerStateName, 'Done'>;

export interface Transition<To extends PodWorkerStateName = PodWorkerStateName> {
  readonly next: To;
  /** Run again after this delay unless woken earlier; undefined: only when woken. */
  readonly wakeAfterMs?: number;
}

export interface PodState<
  Name extends RunnableStateName = RunnableStateName,
  Next extends PodWorkerStateName = PodWorkerStateName,
> {
  readonly name: Name;
  /** Where this state may go; staying (a wait, a retry) is always allowed. */
  readonly next: readonly Next[];
  run(ctx: WorkerContext): Promise<Transition<Name | Next>>;
}

/**
 * Declares a state. `next` is the only place its moves are named: NoInfer keeps what `run`
 * returns from widening them, so `run` returning a state not in `next` is a compile error.
 */
export function podState<const Name extends RunnableStateName, const Next extends PodWorkerStateName>(state: {
  readonly name: Name;
  readonly next: readonly Next[];
  run(ctx: WorkerContext): Promise<Transition<NoInfer<Name | Next>>>;
}): PodState<Name, Next> {
  return state;
}

/** Every runnable state, each under its own name (a table with a state missing or misfiled fails to compile). */
export type PodStates = { readonly [S in RunnableStateName]: PodState<S> };

// The pod worker's states and the moves each may make. The type-level half is checked by tsc
// (this file is in tsconfig's include): the line after each `@ts-expect-error` must fail to compile,
// or the typecheck fails with "Unused '@ts-expect-error' directive". A bad move is reported on the
// state's `run`, naming the state it may not reach.
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  podState,
  type PodState,
  type PodStates,
  type RunnableStateName,
} from '../../../src/podworkers/states/pod-state.js';
import { syncing } from '../../../src/podworkers/states/syncing.js';
import { terminated } from '../../../src/podworkers/states/terminated.js';
import { terminating } from '../../../src/podworkers/states/terminating.js';
import { waitingToStart } from '../../../src/podworkers/states/waiting-to-start.js';
import type { PodWorkerStateName } from '../../../src/podworkers/worker-context.js';

const STATES: PodStates = {
  WaitingToStart: waitingToStart,
  Syncing: syncing,
  Terminating: terminating,
  Terminated: terminated,
};

/** Never called: the compile-time checks. */
export function movesThatMustNotCompile(): void {
  podState({
    name: 'Syncing',
    next: ['Terminating'],
    // @ts-expect-error Syncing never jumps to Terminated: its containers are stopped in Terminating first
    async run() {
      return { next: 'Terminated' };
    },
  });
  podState({
    name: 'Terminating',
    next: ['Terminated'],
    // @ts-expect-error a pod being stopped never goes back to syncing, even when its manifest returns
    async run(ctx) {
      if (ctx.desired) return { next: 'Syncing' };
      return { next: 'Terminated' };
    },
  });
  // @ts-expect-error a move to a state that does not exist
  podState({ name: 'Terminated', next: ['Gone'], run: async () => ({ next: 'Terminated' }) });
  // @ts-expect-error Done ends a worker; it runs no step
  podState({ name: 'Done', next: [], run: async () => ({ next: 'Done' }) });
  const misfiled: PodStates = {
    WaitingToStart: waitingToStart,
    // @ts-expect-error the runner's table files every state under its own name
    Syncing: terminating,
    Terminating: terminating,
    Terminated: terminated,
  };
  // @ts-expect-error and misses none
  const missing: PodStates = { WaitingToStart: waitingToStart, Syncing: syncing, Terminating: terminating };
  void misfiled;
  void missing;
}

type Moves<S> = S extends PodState<RunnableStateName, infer Next> ? Next : never;

describe('pod worker state transitions', () => {
  it('each state declares exactly the moves the kubelet pod lifecycle has (and a pod removed before it started ends at once)', () => {
    expectTypeOf<Moves<typeof waitingToStart>>().toEqualTypeOf<'Syncing' | 'Terminating' | 'Done'>();
    expectTypeOf<Moves<typeof syncing>>().toEqualTypeOf<'Terminating'>();
    expectTypeOf<Moves<typeof terminating>>().toEqualTypeOf<'Terminated'>();
    expectTypeOf<Moves<typeof terminated>>().toEqualTypeOf<'Terminating' | 'Done'>();
    const declared = Object.fromEntries(Object.values(STATES).map((s) => [s.name, [...s.next].sort()]));
    expect(declared).toEqual({
      WaitingToStart: ['Done', 'Syncing', 'Terminating'],
      Syncing: ['Terminating'],
      Terminating: ['Terminated'],
      Terminated: ['Done', 'Terminating'],
    });
  });

  it('once a pod is stopping it never runs again, and every state can still end', () => {
    const reach = (from: PodWorkerStateName): Set<PodWorkerStateName> => {
      const seen = new Set<PodWorkerStateName>();
      const walk = (s: PodWorkerStateName): void => {
        if (s === 'Done') return;
        for (const n of STATES[s].next) {
          if (seen.has(n)) continue;
          seen.add(n);
          walk(n);
        }
      };
      walk(from);
      return seen;
    };
    for (const s of ['Terminating', 'Terminated'] as const) {
      expect(reach(s).has('Syncing'), `${s} -> Syncing`).toBe(false);
      expect(reach(s).has('WaitingToStart'), `${s} -> WaitingToStart`).toBe(false);
    }
    for (const s of Object.keys(STATES) as RunnableStateName[]) expect(reach(s).has('Done'), `${s} ends`).toBe(true);
  });
});

// The plan's actions and their executors. The type-level half is checked by tsc (this file is in
// tsconfig's include): the line after each `@ts-expect-error` must fail to compile, or the
// typecheck fails with "Unused '@ts-expect-error' directive".
import { describe, expect, it } from 'vitest';
import type { PodAction, PodActionKind } from '../../../src/podworkers/compute-actions.js';
import { EXECUTORS, type ActionExecutors } from '../../../src/podworkers/execute-actions.js';

/** Never called: the compile-time checks. */
export function executorMapsThatMustNotCompile(): void {
  type ResizeContainer = { readonly kind: 'resizeContainer'; readonly id: string };
  // @ts-expect-error a new action kind (here resizeContainer) without an executor
  const withResize: ActionExecutors<PodAction | ResizeContainer> = EXECUTORS;
  const { removeSandbox: _, ...rest } = EXECUTORS;
  // @ts-expect-error an executor map that lost a kind
  const missing: ActionExecutors = rest;
  // @ts-expect-error each executor is handed its own kind of action: a sandbox stop names no container
  const crossed: ActionExecutors = { ...EXECUTORS, stopSandbox: { run: async (_x, a) => void a.container } };
  void withResize;
  void missing;
  void crossed;
}

const KINDS: readonly PodActionKind[] = [
  'killContainer',
  'stopSandbox',
  'createSandbox',
  'startCreatedContainer',
  'startEphemeralContainer',
  'startContainer',
  'resizePod',
  'removeContainer',
  'removeSandbox',
];

describe('action executors', () => {
  it('has one executor per action kind; only kills run side by side, only starts and resizes need the sandbox', () => {
    expect(Object.keys(EXECUTORS).sort()).toEqual([...KINDS].sort());
    expect(KINDS.filter((k) => EXECUTORS[k].parallel)).toEqual(['killContainer']);
    expect(KINDS.filter((k) => EXECUTORS[k].needsSandbox)).toEqual([
      'startCreatedContainer',
      'startEphemeralContainer',
      'startContainer',
      'resizePod',
    ]);
  });
});

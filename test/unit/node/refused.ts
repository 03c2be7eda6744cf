// Asserts that a path builder refused a name as a path component, naming which kind of name it was.
import { expect } from 'vitest';
import { UnsafePathComponentError } from '../../../src/node/volume-errors.js';

export function refused(fn: () => unknown, what: string): void {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(UnsafePathComponentError);
  expect((err as UnsafePathComponentError).what).toBe(what);
}

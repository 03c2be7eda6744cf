import { describe, expect, it } from 'vitest';
import { errorMessage } from '../../../src/util/error-message.js';

describe('errorMessage', () => {
  it("is an Error's message, or anything else as a string", () => {
    expect(errorMessage(new TypeError('bad input'))).toBe('bad input');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errorMessage(null)).toBe('null');
  });
});

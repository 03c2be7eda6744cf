// The glob the keyring matches host labels with: Go's path/filepath.Match, checked against the cases
// of Go's own match_test.go (facts: pattern, name, result; ErrBadPattern is "matches nothing").
import { describe, expect, it } from 'vitest';
import { compileFilepathPattern, filepathMatch } from '../../../src/kuberuntime/filepath-match.js';

describe("Go's filepath.Match", () => {
  it.each([
    ['abc', 'abc', true],
    ['*', 'abc', true],
    ['*c', 'abc', true],
    ['a*', 'a', true],
    ['a*', 'abc', true],
    ['a*', 'ab/c', false],
    ['a*/b', 'abc/b', true],
    ['a*/b', 'a/c/b', false],
    ['a*b*c*d*e*/f', 'axbxcxdxe/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', false],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/fff', false],
    ['a*b?c*x', 'abxbbxdbxebxczzx', true],
    ['a*b?c*x', 'abxbbxdbxebxczzy', false],
    ['ab[c]', 'abc', true],
    ['ab[b-d]', 'abc', true],
    ['ab[e-g]', 'abc', false],
    ['ab[^c]', 'abc', false],
    ['ab[^b-d]', 'abc', false],
    ['ab[^e-g]', 'abc', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'ab', false],
    ['a?b', 'a☺b', true],
    ['a[^a]b', 'a☺b', true],
    ['a???b', 'a☺b', false],
    ['a[^a][^a][^a]b', 'a☺b', false],
    ['[a-ζ]*', 'α', true],
    ['*[a-ζ]', 'A', false],
    ['a?b', 'a/b', false],
    ['a*b', 'a/b', false],
    ['[\\]a]', ']', true],
    ['[\\-]', '-', true],
    ['[x\\-]', 'x', true],
    ['[x\\-]', '-', true],
    ['[x\\-]', 'z', false],
    ['[\\-x]', 'x', true],
    ['[\\-x]', '-', true],
    ['[\\-x]', 'a', false],
    ['*x', 'xxx', true],
    // Not Go's cases: '!' is no negation in Go (it is in shells), and a character outside the BMP is one '?'.
    ['[!a]', '!', true],
    ['[!a]', 'b', false],
    ['a?b', 'a😀b', true],
  ])('%s against %s: %s', (pattern, name, want) => expect(filepathMatch(pattern, name)).toBe(want));

  it.each([
    ['[]a]', ']'],
    ['[-]', '-'],
    ['[x-]', 'x'],
    ['[x-]', '-'],
    ['[x-]', 'z'],
    ['[-x]', 'x'],
    ['[-x]', '-'],
    ['[-x]', 'a'],
    ['\\', 'a'],
    ['[a-b-c]', 'a'],
    ['[', 'a'],
    ['[^', 'a'],
    ['[^bc', 'a'],
    ['a[', 'a'],
    ['a[', 'ab'],
    ['a[', 'x'],
    ['a/b[', 'x'],
  ])('%s is a bad pattern (ErrBadPattern): matches nothing, not even %s', (pattern, name) => {
    expect(compileFilepathPattern(pattern)).toBeUndefined();
    expect(filepathMatch(pattern, name)).toBe(false);
  });

  it('never backtracks: patterns that take a backtracking matcher exponential time answer at once', () => {
    // With a regular expression each of these runs for longer than the test suite: 2^n ways to split the name.
    expect(filepathMatch('*a'.repeat(60) + '*b', 'a'.repeat(200))).toBe(false);
    expect(filepathMatch('*a'.repeat(60) + '*b', 'a'.repeat(200) + 'b')).toBe(true);
    expect(filepathMatch('*[a-z]?'.repeat(40) + 'x', 'ab'.repeat(120))).toBe(false);
    expect(filepathMatch('*' + 'a'.repeat(127) + 'b', 'a'.repeat(255))).toBe(false);
  });
});

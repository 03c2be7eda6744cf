import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../../../src/util/concurrency-limit';

describe('ConcurrencyLimit', () => {
  it('runs at most max at once, the rest in the order they asked, and a failure frees its place', async () => {
    const limit = new ConcurrencyLimit(2);
    const opened: string[] = [];
    const release = new Map<string, (fail?: boolean) => void>();
    const op = (name: string) =>
      limit.run(
        () =>
          new Promise<string>((resolve, reject) => {
            opened.push(name);
            release.set(name, (fail) => (fail ? reject(new Error(name)) : resolve(name)));
          }),
      );
    const a = op('a');
    const b = op('b');
    const c = op('c');
    const d = op('d');
    await Promise.resolve();
    expect(opened).toEqual(['a', 'b']);
    expect(limit.active).toBe(2);
    release.get('a')!(true);
    await expect(a).rejects.toThrow('a');
    expect(opened).toEqual(['a', 'b', 'c']);
    release.get('b')!();
    await expect(b).resolves.toBe('b');
    expect(opened).toEqual(['a', 'b', 'c', 'd']);
    release.get('c')!();
    release.get('d')!();
    await Promise.all([c, d]);
    expect(limit.active).toBe(0);
  });

  it('refuses a limit below one', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow('at least 1');
  });
});

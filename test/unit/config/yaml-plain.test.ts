// The YAML reader's own conversion to plain data (each node converted once, aliases shared): the
// same result as the library's, merge keys included, in work bounded by the document's expanded
// size (a chain of 100 merges in 3 KB once held the event loop for 200 ms).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument, stringify } from 'yaml';
import { readYaml } from '../../../src/config/parse/yaml';
import { MANIFEST_YAML_OPTIONS } from '../../../src/config/parse/yaml-simple';

const library = (text: string): unknown => parseDocument(text, MANIFEST_YAML_OPTIONS).toJS({ maxAliasCount: -1 });
const ours = (text: string): unknown => {
  const r = readYaml(text);
  if ('empty' in r) throw new Error('empty');
  return r.value;
};

/** A value, or that the text was refused. */
const outcome = (read: () => unknown): { value: unknown } | { refused: true } => {
  try {
    return { value: read() };
  } catch {
    return { refused: true };
  }
};

describe('readYaml conversion', () => {
  it('gives what the library gives for any plain data, in block and flow style', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1 }), fc.jsonValue({ maxDepth: 4 })),
        fc.boolean(),
        (o, flow) => {
          const text = stringify(
            { root: o },
            { version: '1.1', ...(flow ? { collectionStyle: 'flow' as const } : {}) },
          );
          // A key "<<" comes out as a merge key, which the library refuses too: the same answer, refusal included.
          expect(outcome(() => ours(text))).toEqual(outcome(() => library(text)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('merges as YAML 1.1 says: explicit keys win wherever they are, earlier merge sources win over later ones', () => {
    const text = `base: &b {a: 1, b: 1, c: 1}
other: &o {c: 2, d: 2}
m1:
  a: 0
  <<: *b
m2:
  <<: [*o, *b]
  d: 9
m3:
  <<: {e: 5}
  <<: *b
`;
    expect(ours(text)).toEqual(library(text));
    expect(ours(text)).toMatchObject({
      m1: { a: 0, b: 1, c: 1 },
      m2: { c: 2, d: 9, a: 1, b: 1 },
      m3: { e: 5, a: 1, b: 1, c: 1 },
    });
  });

  it('follows a chain of 100 merges to the right result', () => {
    const chain = `b0: &b0 {x: 1}\n${Array.from({ length: 100 }, (_, i) => `b${i + 1}: &b${i + 1}\n  <<: *b${i}\n  y${i}: 1`).join('\n')}\n`;
    const v = ours(chain) as Record<string, Record<string, number>>;
    expect(Object.keys(v.b100!)).toHaveLength(101);
    expect(v).toEqual(library(chain));
  });

  it('resolves an alias to the latest anchor of its name, and keeps __proto__ as a field', () => {
    const text = 'a: &x 1\nb: *x\nc: &x 2\nd: *x\n__proto__: {polluted: true}\n';
    const v = ours(text) as Record<string, unknown>;
    expect(v).toMatchObject({ a: 1, b: 1, c: 2, d: 2 });
    expect(Object.keys(v)).toContain('__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a collection as a key, a merge of a scalar, and an alias cycle', () => {
    expect(() => ours('? [a, b]\n: c\n')).toThrow(/mapping key must be a string, a number or a boolean/);
    expect(() => ours('a: &s 1\nm:\n  <<: *s\n')).toThrow(/merge sources must be mappings/);
    expect(() => ours('a: &a [1, *a]\n')).toThrow(/alias refers to a node that contains it/);
  });
});

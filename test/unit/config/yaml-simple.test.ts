// The fast reader for tool-written YAML (yaml-simple.ts) against the library it stands in for: on
// any text it either defers (undefined) or gives exactly what the library gives, and it does not
// defer on what tools write (kubeadm's manifests, a flood's small pods).
import { readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { MANIFEST_YAML_OPTIONS, readSimpleYaml } from '../../../src/config/parse/yaml-simple';

/** The library's reading, or that it refuses the text. */
function library(text: string): { value: unknown } | { refused: true } {
  const doc = parseDocument(text, { ...MANIFEST_YAML_OPTIONS, uniqueKeys: true });
  if (doc.errors.length > 0) return { refused: true };
  return { value: doc.toJS({ maxAliasCount: -1 }) };
}

const fixtures = path.resolve(__dirname, '../../fixtures/kubeadm');
const kubeadmManifests = readdirSync(fixtures)
  .filter((v) => /^\d/.test(v))
  .flatMap((v) => readdirSync(path.join(fixtures, v, 'manifests')).map((f) => path.join(fixtures, v, 'manifests', f)));

describe('readSimpleYaml', () => {
  it.each(kubeadmManifests.map((f) => [path.relative(fixtures, f), f]))(
    'reads kubeadm %s itself, as the library does',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      const fast = readSimpleYaml(text);
      expect(fast).toBeDefined();
      expect(fast).toEqual(library(text));
    },
  );

  it('reads a small pod with flow collections and quoted strings as the library does', () => {
    const text = `apiVersion: v1
kind: Pod
metadata: {name: flood-1, namespace: default}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: registry.local/busybox:1.36
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    ports: [{containerPort: 8080, protocol: TCP}]
    resources: {}
status: {}
`;
    const fast = readSimpleYaml(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(library(text));
  });

  it('resolves plain scalars through YAML 1.1 as the library does (0644, yes, ~, 1:20, dates stay text)', () => {
    const text =
      'a: 0644\nb: yes\nc: ~\nd: 1:20\ne: 2001-12-14\nf: .inf\ng: 1_000\nh: 0x1F\ni: "0644"\nj: off\nk: 10m\nl: -1\n';
    const fast = readSimpleYaml(text);
    expect(fast).toEqual({
      value: {
        a: 420,
        b: true,
        c: null,
        d: 80,
        e: '2001-12-14',
        f: Infinity,
        g: 1000,
        h: 31,
        i: '0644',
        j: false,
        k: '10m',
        l: -1,
      },
    });
    expect(fast).toEqual(library(text));
  });

  it('keeps __proto__ an ordinary key', () => {
    const fast = readSimpleYaml('metadata:\n  __proto__: x\n') as { value: { metadata: object } };
    expect(Object.getOwnPropertyNames(fast.value.metadata)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(fast.value.metadata)).toBe(Object.prototype);
  });

  it.each([
    ['an anchor and alias', 'a: &x 1\nb: *x\n'],
    ['a comment', 'a: 1 # one\n'],
    ['a comment line', '# c\na: 1\n'],
    ['a block scalar', 'a: |\n  text\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a tab', 'a:\t1\n'],
    ['a second document', 'a: 1\n---\nb: 2\n'],
    ['a mapping in a compact value', 'a: b: c\n'],
    ['a value ending in a colon', 'a: foo:\n'],
    ['a merge key', 'a: {x: 1}\n<<: {y: 2}\n'],
    ['a multi-line plain scalar', 'a: one\n  two\n'],
    ['an escape', 'a: "x\\ty"\n'],
    ['a quote doubled', "a: 'it''s'\n"],
    ['a number as a key', '1: a\n'],
    ['a top-level list', '- a\n'],
    ['a trailing comma in flow', 'a: [1, 2,]\n'],
    ['a flow collection over lines', 'a: [1,\n  2]\n'],
    ['a tag', 'a: !!str 1\n'],
    ['an anchor on a block', 'a: &x\n  b: 1\n'],
    ['an alias in flow', 'a: [*x]\n'],
    ['a folded scalar', 'a: >\n  text\n'],
    ['CRLF line ends', 'a: 1\r\nb: 2\r\n'],
    ['a nested sequence on one line', 'a:\n- - x\n'],
    ['deep nesting', `${Array.from({ length: 30 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n')} x\n`],
  ])('leaves %s to the library', (_what, text) => {
    expect(readSimpleYaml(text)).toBeUndefined();
  });

  it('on generated documents either defers or gives exactly what the library gives, and often reads them itself', () => {
    const scalars = fc.constantFrom(
      'yes',
      'no',
      'on',
      'Off',
      'Y',
      'n',
      'true',
      'False',
      '~',
      'null',
      'NULL',
      '0644',
      '0',
      '-1',
      '+1',
      '1_000',
      '0x1F',
      '0b101',
      '1:20',
      '1:20.5',
      '1.5',
      '.5',
      '1e3',
      '.inf',
      '-.Inf',
      '.nan',
      '2001-12-14',
      '127.0.0.1',
      '10m',
      '100Mi',
      '--flag=x',
      '-x',
      '/etc/kubernetes',
      'a b',
      'a  b',
      'registry.k8s.io/etcd:3.5.9-0',
      'https://127.0.0.1:2379',
      '"quoted"',
      "'single'",
      "'it''s'",
      '""',
      "''",
      '"a: b"',
      '"a, b"',
      "'x: y'",
      'x:y',
      'a,b',
      'a]',
      '[a]',
      '{a: 1}',
      '[]',
      '{}',
      '[a, "b", 1]',
      '{x: yes, y: "1"}',
      '[[1, 2], {a: [b]}]',
      '{a: {b: c}}',
      'foo:',
      '? x',
      ': x',
      '- x',
      '-',
      '-1.5',
      "'a' b",
      '"a" b',
      '[a, b',
      '{a: 1, a: 2}',
      '{a}',
      '[a,,b]',
      'k: v',
      'a:b: c',
      '=',
      '?',
      'x?',
      '0o17',
      '00',
    );
    const keys = fc.constantFrom(
      'name',
      'app.kubernetes.io/name',
      '"quoted key"',
      "'single key'",
      '1',
      'true',
      'yes',
      'a:b',
      '-k',
      'k-1',
      'x_y',
      'on',
      '""',
      'null',
    );
    type Tree = { s: string } | { m: Array<[string, Tree]> } | { q: Tree[] };
    const { tree } = fc.letrec<{ tree: Tree }>((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        scalars.map((s) => ({ s })),
        fc.array(fc.tuple(keys, tie('tree')), { minLength: 1, maxLength: 4 }).map((m) => ({ m })),
        fc.array(tie('tree'), { minLength: 1, maxLength: 3 }).map((q) => ({ q })),
      ),
    }));
    /** Block style as tools write it: lists under a key at the key's indent or deeper, `- key:` compact maps. */
    const render = (t: Tree, indent: number, sameIndentLists: boolean): string[] => {
      const pad = ' '.repeat(indent);
      if ('s' in t) return [`${pad}${t.s}`];
      if ('m' in t) {
        return t.m.flatMap(([k, v]) => {
          if ('s' in v) return [`${pad}${k}: ${v.s}`];
          if ('q' in v) return [`${pad}${k}:`, ...render(v, sameIndentLists ? indent : indent + 2, sameIndentLists)];
          return [`${pad}${k}:`, ...render(v, indent + 2, sameIndentLists)];
        });
      }
      return t.q.flatMap((item) => {
        if ('s' in item) return [`${pad}- ${item.s}`];
        if ('m' in item) {
          const [first, ...rest] = render(item, indent + 2, sameIndentLists);
          return [`${pad}- ${first!.slice(indent + 2)}`, ...rest];
        }
        return [`${pad}-`, ...render(item, indent + 2, sameIndentLists)];
      });
    };
    let read = 0;
    let runs = 0;
    fc.assert(
      fc.property(
        fc.array(fc.tuple(keys, tree), { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.boolean(),
        (top, same, leadingMarker) => {
          const text = `${leadingMarker ? '---\n' : ''}${render({ m: top }, 0, same).join('\n')}\n`;
          runs++;
          const fast = readSimpleYaml(text);
          if (fast === undefined) return;
          read++;
          expect(fast, text).toEqual(library(text));
        },
      ),
      { numRuns: 2000 },
    );
    // Not a reader that defers everything (one of the palette's many odd values defers a whole document).
    expect(read / runs).toBeGreaterThan(0.02);
  });
});

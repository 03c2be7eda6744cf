// src/ keeps the import directions of ../shared/design.md (the rules: import-rules.ts; in words:
// DEVELOPERS.md, "Import directions").
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCircles } from './import-circles.js';
import { checkImports, RULES, type ImportRules, type SourceImport } from './import-rules.js';
import { importsOf, resolveSpecifier, specifiersOf } from './source-imports.js';

const SRC = path.resolve(import.meta.dirname, '../../../src');

const imp = (from: string, to: string): SourceImport => ({ from, to });
const refused = (imports: SourceImport[], rules?: ImportRules): string[] =>
  checkImports(imports, rules).violations.map((v) => v.message);

describe('import directions of src/', () => {
  const imports = importsOf(SRC);

  it('reads the imports of src/ (a sample the design depends on is there)', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(imports).toContainEqual(imp('podworkers/states/syncing.ts', 'kuberuntime/container-hash.ts'));
    expect(imports).toContainEqual(imp('config/decode/decode-pod.ts', 'k8s/quantity.ts'));
  });

  it('no part imports one that design.md puts before it, beyond the named exceptions', () => {
    expect(checkImports(imports).violations.map((v) => v.message)).toEqual([]);
  });

  it('every named exception is still needed (remove the ones that are not)', () => {
    expect(checkImports(imports).unusedExceptions).toEqual([]);
  });

  it('no file reaches itself through its imports (no import circle)', () => {
    expect(importCircles(imports)).toEqual([]);
  });

  it("apiserver's rooms import only client/ and events/ of each other, and client/ no other room (src/apiserver/README.md)", () => {
    const room = (file: string): string | undefined => /^apiserver\/([^/]+)\//.exec(file)?.[1];
    const crossing = imports.filter((i) => {
      const from = room(i.from);
      const to = room(i.to);
      if (!from || !to || from === to) return false;
      return from === 'client' || !['client', 'events'].includes(to);
    });
    expect(crossing.map((i) => `${i.from} -> ${i.to}`)).toEqual([]);
  });
});

describe('the import circle check', () => {
  it('finds each circle once, with every file on it, and nothing in a chain without one', () => {
    expect(
      importCircles([
        imp('a/one.ts', 'a/two.ts'),
        imp('a/two.ts', 'a/one.ts'),
        imp('b/x.ts', 'b/y.ts'),
        imp('b/y.ts', 'b/z.ts'),
        imp('b/z.ts', 'b/x.ts'),
        imp('b/z.ts', 'c/leaf.ts'),
        imp('c/p.ts', 'c/q.ts'),
        imp('c/q.ts', 'c/leaf.ts'),
      ]),
    ).toEqual([
      ['a/one.ts', 'a/two.ts'],
      ['b/x.ts', 'b/y.ts', 'b/z.ts'],
    ]);
  });
});

describe('the import check', () => {
  it('lets a part import later parts, its own files and the leaves; wiring imports anything', () => {
    expect(
      refused([
        imp('config/a.ts', 'podworkers/b.ts'),
        imp('podworkers/a.ts', 'kuberuntime/b.ts'),
        imp('podworkers/a.ts', 'pleg/pod-cache.ts'),
        imp('kuberuntime/a.ts', 'cri/b.ts'),
        imp('status/a.ts', 'podworkers/observer.ts'),
        imp('apiserver/a.ts', 'status/b.ts'),
        imp('podworkers/states/a.ts', 'podworkers/b.ts'),
        imp('cri/a.ts', 'util/b.ts'),
        imp('podworkers/a.ts', 'k8s/annotations.ts'),
        imp('process/a.ts', 'log/logger.ts'),
        imp('cli/agent.ts', 'cri/b.ts'),
        imp('server/a.ts', 'cli/options.ts'),
        imp('main.ts', 'cli/run.ts'),
      ]),
    ).toEqual([]);
  });

  it('refuses a new import against the order, naming the file, the import and the rule', () => {
    expect(refused([imp('cri/cri-client.ts', 'kuberuntime/labels.ts')])).toEqual([
      "cri/cri-client.ts imports kuberuntime/labels.ts: cri comes after kuberuntime in design.md's order (a later part never imports an earlier one)",
    ]);
    expect(refused([imp('podworkers/pod-worker.ts', 'config/desired-pods.ts')])).toHaveLength(1);
    expect(refused([imp('pleg/pleg.ts', 'podworkers/pod-workers.ts')])).toHaveLength(1);
    expect(refused([imp('status/a.ts', 'apiserver/b.ts')])).toHaveLength(1);
    expect(refused([imp('podworkers/a.ts', 'prober/b.ts')])).toHaveLength(1);
    expect(refused([imp('kuberuntime/a.ts', 'status/b.ts')])).toHaveLength(1);
  });

  it('refuses imports between parts side by side, into wiring, and out of leaves', () => {
    expect(refused([imp('node/a.ts', 'cm/b.ts')])).toEqual([
      "node/a.ts imports cm/b.ts: node and cm stand side by side in design.md's order and import neither each other",
    ]);
    expect(refused([imp('config/a.ts', 'prober/b.ts')])).toHaveLength(1);
    expect(refused([imp('status/a.ts', 'cli/options.ts')])).toEqual([
      'status/a.ts imports cli/options.ts: cli is wiring: only wiring imports it',
    ]);
    expect(refused([imp('util/a.ts', 'podworkers/b.ts')])).toEqual([
      'util/a.ts imports podworkers/b.ts: util is a leaf: it imports only other leaves (k8s, util, log, process, version.ts, dbus, informer)',
    ]);
    expect(refused([imp('k8s/a.ts', 'util/b.ts')])).toEqual([
      "k8s/a.ts imports util/b.ts: k8s imports nothing of bootlet's",
    ]);
    expect(refused([imp('k8s/a.ts', 'k8s/b.ts')])).toEqual([]);
  });

  it('refuses a part it does not know and an import out of src/', () => {
    expect(refused([imp('gadgets/a.ts', 'util/b.ts')])).toEqual([
      'gadgets/a.ts imports util/b.ts: gadgets has no place in the import rules: add it to test/unit/architecture/import-rules.ts and DEVELOPERS.md',
    ]);
    expect(refused([imp('helper.ts', 'util/b.ts')])).toHaveLength(1);
    expect(refused([imp('version.ts', '../package.json')])).toEqual([
      'version.ts imports ../package.json, outside src/',
    ]);
  });

  it('excepts exactly the named file pairs, and reports an exception nothing uses', () => {
    const rules: ImportRules = {
      ...RULES,
      exceptions: [
        { from: 'podworkers/pod-workers.ts', to: 'config/types.ts', why: 'test' },
        { from: 'node/x.ts', to: 'cm/y.ts', why: 'stale' },
      ],
    };
    const result = checkImports(
      [
        imp('podworkers/pod-workers.ts', 'config/types.ts'),
        imp('podworkers/pod-workers.ts', 'config/desired-pods.ts'),
        imp('podworkers/worker-context.ts', 'config/types.ts'),
      ],
      rules,
    );
    expect(result.violations.map((v) => `${v.from} -> ${v.to}`)).toEqual([
      'podworkers/pod-workers.ts -> config/desired-pods.ts',
      'podworkers/worker-context.ts -> config/types.ts',
    ]);
    expect(result.unusedExceptions.map((e) => e.why)).toEqual(['stale']);
  });

  it('reads every kind of import from source text, not those in comments or strings', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "const f = await import('./f.js');",
      "type H = import('./h.js').H;",
      "import { readFile } from 'node:fs';",
      "// import x from './in-a-comment.js';",
      'const s = "import y from \'./in-a-string.js\'";',
    ].join('\n');
    expect(specifiersOf(text)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './f.js', './h.js', 'node:fs']);
    expect(resolveSpecifier('config/decode/decode-pod.ts', '../../kuberuntime/quantity')).toBe(
      'kuberuntime/quantity.ts',
    );
    expect(resolveSpecifier('podworkers/states/syncing.ts', '../compute-actions.js')).toBe(
      'podworkers/compute-actions.ts',
    );
    expect(resolveSpecifier('version.ts', '../package.json')).toBe('../package.json');
  });
});

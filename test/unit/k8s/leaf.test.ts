// src/k8s holds Kubernetes facts that every part reads, so it may import nothing of bootlet's:
// only node builtins, kubernetes-types, and its own files.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  SOURCE_ANNOTATIONS,
  CONFIG_HASH,
  CONFIG_SEEN,
  CONFIG_SOURCE,
  CONFIG_MIRROR,
} from '../../../src/k8s/annotations.js';

const LEAF = join(import.meta.dirname, '../../../src/k8s');

function importsOf(text: string): string[] {
  return [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

describe('src/k8s', () => {
  it('imports nothing of bootlet outside itself', () => {
    const files = readdirSync(LEAF).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(0);
    const bad: string[] = [];
    for (const f of files) {
      for (const spec of importsOf(readFileSync(join(LEAF, f), 'utf8'))) {
        const ok = spec.startsWith('node:') || spec.startsWith('kubernetes-types/') || /^\.\/[^/]+$/.test(spec);
        if (!ok) bad.push(`${f}: ${spec}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('the import scan sees a forbidden import', () => {
    expect(importsOf("import { x } from '../util/y.js';\nexport { z } from './w.js';")).toEqual([
      '../util/y.js',
      './w.js',
    ]);
  });

  it('a source adds hash, seen and source, never the mirror key', () => {
    expect([...SOURCE_ANNOTATIONS].sort()).toEqual([CONFIG_HASH, CONFIG_SEEN, CONFIG_SOURCE].sort());
    expect(SOURCE_ANNOTATIONS.has(CONFIG_MIRROR)).toBe(false);
  });
});

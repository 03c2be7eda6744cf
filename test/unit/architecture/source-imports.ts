// Reads the relative imports of every TypeScript file under src/: import, import type, export ...
// from, import() and import('...') types, as the TypeScript scanner finds them (comments and
// strings are skipped). Packages and node: modules are not bootlet's and are left out.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { SourceImport } from './import-rules.js';

/** The module specifiers a source text imports. */
export function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
}

/** A relative specifier of `from` (both relative to src/) as the .ts file it names. */
export function resolveSpecifier(from: string, specifier: string): string {
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  if (target.endsWith('.js')) return `${target.slice(0, -3)}.ts`;
  return /\.[a-z]+$/.test(target) ? target : `${target}.ts`;
}

function filesUnder(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) return filesUnder(dir, p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

export function importsOf(srcDir: string): SourceImport[] {
  return filesUnder(srcDir).flatMap((from) =>
    specifiersOf(readFileSync(path.join(srcDir, from), 'utf8'))
      .filter((s) => s.startsWith('.'))
      .map((s) => ({ from, to: resolveSpecifier(from, s) })),
  );
}

// Import circles among the files of src/: sets of files that reach each other through their imports
// (type-only imports too: a circle of types is still two files that cannot be read one after the other).
import type { SourceImport } from './import-rules.js';

/** Each circle as its files (two or more, sorted), found as the strongly connected components of the import graph. */
export function importCircles(imports: readonly SourceImport[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of imports) {
    if (!next.has(from)) next.set(from, []);
    next.get(from)!.push(to);
  }
  // Tarjan's algorithm, iterative so a long chain of imports cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  let counter = 0;
  for (const root of next.keys()) {
    if (index.has(root)) continue;
    const work: { file: string; i: number }[] = [{ file: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const targets = next.get(top.file) ?? [];
      if (top.i < targets.length) {
        const to = targets[top.i++]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter++);
          stack.push(to);
          onStack.add(to);
          work.push({ file: to, i: 0 });
        } else if (onStack.has(to)) low.set(top.file, Math.min(low.get(top.file)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(top.file)!));
      if (low.get(top.file) !== index.get(top.file)) continue;
      const component: string[] = [];
      let f: string;
      do {
        f = stack.pop()!;
        onStack.delete(f);
        component.push(f);
      } while (f !== top.file);
      if (component.length > 1) circles.push(component.sort());
    }
  }
  return circles;
}

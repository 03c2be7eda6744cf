// What a process's resident memory is made of, from /proc/<pid>/smaps: the executable's own
// mapped file (Node's code and data), shared libraries, the malloc heap, and anonymous memory
// (V8's heap, its code space, thread stacks and large mallocs).

export interface RssParts {
  /** Executable file mapped executable (Node's and V8's machine code). */
  exeCode: number;
  /** Executable file's other mappings (read-only data, the injected bundle, relocated data). */
  exeData: number;
  libraries: number;
  /** brk heap: malloc's main arena. */
  heap: number;
  /** Anonymous mappings: V8's heap and code space, other malloc arenas, thread stacks. */
  anonymous: number;
  other: number;
  total: number;
}

/** RSS by kind, MiB. `exePath` is the executable's real path as /proc shows it. */
export function rssParts(pid: number, exePath: string, read: (p: string) => string): RssParts {
  const parts: RssParts = { exeCode: 0, exeData: 0, libraries: 0, heap: 0, anonymous: 0, other: 0, total: 0 };
  let kind: keyof RssParts = 'other';
  for (const line of read(`/proc/${pid}/smaps`).split('\n')) {
    // A mapping's header: "start-end perms offset dev inode [path]".
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header) {
      const [, perms, where] = header as unknown as [string, string, string];
      if (where === exePath) kind = perms.includes('x') ? 'exeCode' : 'exeData';
      else if (/\.so(\.|$)/.test(where)) kind = 'libraries';
      else if (where === '[heap]') kind = 'heap';
      else if (where === '' || where.startsWith('[stack') || where.startsWith('[anon')) kind = 'anonymous';
      else kind = 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      const mib = Number(rss[1]) / 1024;
      parts[kind] += mib;
      parts.total += mib;
    }
  }
  return parts;
}

export function formatRssParts(p: RssParts): string {
  const f = (n: number): string => n.toFixed(1);
  return `${f(p.total)} MiB = executable code ${f(p.exeCode)} + executable data ${f(p.exeData)} + libraries ${f(p.libraries)} + malloc heap ${f(p.heap)} + anonymous (V8 heap, code space, stacks) ${f(p.anonymous)} + other ${f(p.other)}`;
}

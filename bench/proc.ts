// What a process costs, read from /proc: CPU time (user+system) and resident memory.

const CLK_TCK = 100;

export function cpuSeconds(pid: number, read: (p: string) => string): number {
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const stat = read(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

export function rssMiB(pid: number, read: (p: string) => string): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(read(`/proc/${pid}/status`))?.[1] ?? 0);
  return kb / 1024;
}

/** CPU used by `pid` over `seconds` of wall time, as a percentage of one core. */
export async function idleCpuPercent(pid: number, seconds: number, read: (p: string) => string): Promise<number> {
  const c0 = cpuSeconds(pid, read);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const wall = (performance.now() - t0) / 1000;
  return ((cpuSeconds(pid, read) - c0) / wall) * 100;
}

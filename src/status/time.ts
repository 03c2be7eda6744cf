// API timestamps: RFC 3339 in UTC, truncated to whole seconds, as the API server stores them.

export function apiTime(d: Date): string {
  return new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** From CRI nanoseconds; undefined for 0, which the runtime uses for "never happened". */
export function apiTimeFromNs(ns: number): string | undefined {
  return ns > 0 ? apiTime(new Date(Math.floor(ns / 1e6))) : undefined;
}

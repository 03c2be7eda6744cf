// Timestamps as the API serializes them: metav1.Time to the second, MicroTime to the microsecond.

export function apiTime(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

export function apiMicroTime(d: Date): string {
  return d.toISOString().replace(/\.(\d+)Z$/, (_, ms: string) => `.${ms.padEnd(6, '0')}Z`);
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** The same instant at second precision, for comparing what we hold with what the server stored. */
export function truncateTime(s: string): string {
  return RFC3339.test(s) ? apiTime(new Date(Math.floor(Date.parse(s) / 1000) * 1000)) : s;
}

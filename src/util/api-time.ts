// Times as the Kubernetes API writes them, in one place for every part that writes or compares
// them (node and pod status, leases, events, the local pod list): RFC 3339 in UTC.
//
// - metav1.Time (`apiTime`): whole seconds, the fraction dropped (truncated, not rounded), as the
//   API server stores it;
// - metav1.MicroTime (`apiMicroTime`): six fraction digits (a lease's renewTime, events.k8s.io);
// - Go's RFC3339Nano with nine digits (`formatRfc3339Nano`; a Date has milliseconds, the rest is 0).
//
// Formatted by `isoTime`, never by Date's own toISOString (see iso-time.ts).
import { isoTime } from './iso-time.js';

export function apiTime(d: Date): string {
  return isoTime(Math.floor(d.getTime() / 1000) * 1000).replace('.000Z', 'Z');
}

export function apiMicroTime(d: Date): string {
  return isoTime(d.getTime()).replace(/\.(\d+)Z$/, (_, ms: string) => `.${ms.padEnd(6, '0')}Z`);
}

export function formatRfc3339Nano(d: Date): string {
  return isoTime(d.getTime()).replace(/\.(\d+)Z$/, (_, ms: string) => `.${ms.padEnd(9, '0')}Z`);
}

/** From CRI nanoseconds; undefined for 0, which the runtime uses for "never happened". */
export function apiTimeFromNs(ns: number): string | undefined {
  return ns > 0 ? apiTime(new Date(Math.floor(ns / 1e6))) : undefined;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** The same instant at second precision, for comparing what we hold with what the server stored; anything else unchanged. */
export function truncateTime(s: string): string {
  // Most strings compared are no time, or one already in the API's form: neither needs a Date.
  if (s.length < 20 || s.charCodeAt(4) !== 0x2d || s.charCodeAt(10) !== 0x54) return s;
  if (s.length === 20 && s.charCodeAt(19) === 0x5a && RFC3339.test(s)) return s;
  return RFC3339.test(s) ? apiTime(new Date(Math.floor(Date.parse(s) / 1000) * 1000)) : s;
}

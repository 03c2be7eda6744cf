// `Date.prototype.toISOString`, from the UTC getters. V8 formats a Date to a string through its date
// cache, whose first use loads ICU's time-zone data and code: 1.1 MiB of the executable's pages
// that then stay resident for as long as the agent runs (README, "What an idle agent costs"). The
// UTC getters do not touch it. The agent writes times (pod status, the config.seen annotation, log
// fields) only through here.

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** The same text as `new Date(ms).toISOString()`; a time outside years 0–9999 (or NaN) goes to toISOString itself (extended years, RangeError). */
export function isoTime(ms: number): string {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return d.toISOString();
  return (
    `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}Z`
  );
}

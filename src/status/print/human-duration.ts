// Ages as kubectl prints them ("45s", "5m12s", "3h", "2d"), after apimachinery's HumanDuration:
// more precision for short ages, less for long ones.

export function humanDuration(ms: number): string {
  // Truncated toward zero like Go's int(d.Seconds()): a clock a second ahead still reads "0s".
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return hours % 24 === 0 ? `${days}d` : `${days}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** "<unknown>" for a missing or unreadable timestamp, as kubectl. */
export function ageSince(timestamp: string | undefined, nowMs: number): string {
  const t = timestamp ? Date.parse(timestamp) : Number.NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(nowMs - t);
}

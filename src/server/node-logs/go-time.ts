// Times as the kubelet's node log query handles them: parsed with time.Parse(time.RFC3339, ...),
// printed in an error with time.Time's String method, and given to journalctl in its dateLayout.

export interface GoTime {
  /** Nanoseconds since the epoch. */
  readonly ns: bigint;
  /** The offset the text gave, in minutes east of UTC. */
  readonly offsetMinutes: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):(\d{2}))$/;

/** time.Parse(time.RFC3339, s), or undefined where Go returns an error (ranges included: no 30 February). */
export function parseRFC3339(s: string): GoTime | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) return undefined;
  let offsetMinutes = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const wall = new Date(0);
  wall.setUTCFullYear(year, month - 1, day);
  wall.setUTCHours(hour, minute, second, 0);
  const fraction = BigInt(((m[7] ?? '') + '000000000').slice(0, 9));
  const ns = BigInt(wall.getTime() - offsetMinutes * 60_000) * 1_000_000n + fraction;
  return { ns, offsetMinutes };
}

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** The wall clock of `t` in its own offset. */
function wallClock(t: GoTime): Date {
  return new Date(Number(t.ns / 1_000_000n) + t.offsetMinutes * 60_000);
}

/**
 * time.Time.String(): "2006-01-02 15:04:05.999999999 -0700 MST". A "Z" time is in UTC; another
 * offset is a zone without a name, which Go prints as the offset again (on a node whose local zone
 * is UTC, where time.Parse keeps a zero offset as UTC).
 */
export function goTimeString(t: GoTime): string {
  const d = wallClock(t);
  const frac = (((t.ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n).toString().padStart(9, '0');
  const fraction = frac === '000000000' ? '' : `.${frac.replace(/0+$/, '')}`;
  const off = Math.abs(t.offsetMinutes);
  const zone = `${t.offsetMinutes < 0 ? '-' : '+'}${pad(Math.floor(off / 60))}${pad(off % 60)}`;
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${fraction} ` +
    `${zone} ${t.offsetMinutes === 0 ? 'UTC' : zone}`
  );
}

/**
 * The kubelet's journalctl time ("2006-1-2 15:4:5", whole seconds), of the instant in UTC and said
 * so: journalctl reads a time without a zone in the node's local zone.
 */
export function journalctlTime(t: GoTime): string {
  const d = new Date(Number(t.ns / 1_000_000n));
  return (
    `${pad(d.getUTCFullYear(), 4)}-${d.getUTCMonth() + 1}-${d.getUTCDate()} ` +
    `${d.getUTCHours()}:${d.getUTCMinutes()}:${d.getUTCSeconds()} UTC`
  );
}

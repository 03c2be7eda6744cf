// /configz: the configuration in force, as {"kubeletconfig": {...}} with KubeletConfiguration field
// names and JSON forms (durations as Go prints them, "1m0s"; sizes as quantities). Only the fields
// that reach the agent are listed; the ones bootlet merely recognises have no effect to report.
import type { BootletOptions } from '../../cli/options.js';
import type { AnySetting } from '../../cli/settings/setting.js';
import { OPTION_SETTINGS, optionKeyOf } from '../../cli/settings/table.js';

/** time.Duration.String() for whole milliseconds. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  if (rest < 1000) return `${sign}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = (rest / 1000).toString();
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

function jsonValue(s: AnySetting, v: unknown): unknown {
  if (s.type.kind === 'duration' && typeof v === 'number') return goDuration(v);
  if (s.type.kind === 'quantity') return s.type.format(v);
  return v;
}

export function configz(opts: BootletOptions): { kubeletconfig: Record<string, unknown> } {
  const doc: Record<string, unknown> = {};
  for (const s of Object.values(OPTION_SETTINGS) as AnySetting[]) {
    const key = optionKeyOf(s);
    if (!s.field || !key) continue;
    const v = opts[key];
    if (v === undefined) continue;
    const parts = s.field.split('.');
    let at = doc;
    for (const p of parts.slice(0, -1)) at = (at[p] ??= {}) as Record<string, unknown>;
    at[parts[parts.length - 1]!] = jsonValue(s, v);
  }
  return { kubeletconfig: doc };
}

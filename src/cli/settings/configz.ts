// /configz: the configuration in force, as {"kubeletconfig": {...}} with KubeletConfiguration field
// names and JSON forms (durations as Go prints them, "1m0s"; sizes as quantities). Only the fields
// that reach the agent are listed; the ones bootlet merely recognises have no effect to report.
import type { BootletOptions } from '../options.js';
import { goDuration } from '../../util/duration.js';
import type { AnySetting } from './setting.js';
import { OPTION_SETTINGS, optionKeyOf } from './table.js';

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

// The settings table: every kubelet flag and KubeletConfiguration field bootlet knows, once. The
// flag parser, the config file reader, --help and the README table are all read from here.
import { CONFIG_OPTIONS } from './config-options.js';
import { CONFIG_RECOGNISED } from './config-recognised.js';
import { FLAG_OPTIONS } from './flag-options.js';
import { FLAG_RECOGNISED } from './flag-recognised.js';
import type { AnySetting, Setting } from './setting.js';

/** The settings whose values reach the agent, by the name its options use. */
export const OPTION_SETTINGS = { ...CONFIG_OPTIONS, ...FLAG_OPTIONS };

export type OptionKey = keyof typeof OPTION_SETTINGS;

type ResolvedOf<S> = S extends Setting<infer _T, infer R> ? R : never;

/** The resolved value of every option setting, typed from the table. */
export type ResolvedSettings = { -readonly [K in OptionKey]: ResolvedOf<(typeof OPTION_SETTINGS)[K]> };

const OPTION_KEYS = new Map<AnySetting, OptionKey>(
  (Object.entries(OPTION_SETTINGS) as [OptionKey, AnySetting][]).map(([k, s]) => [s, k]),
);

export const ALL_SETTINGS: readonly AnySetting[] = [...OPTION_KEYS.keys(), ...CONFIG_RECOGNISED, ...FLAG_RECOGNISED];

export function optionKeyOf(s: AnySetting): OptionKey | undefined {
  return OPTION_KEYS.get(s);
}

export const SETTING_BY_FLAG: ReadonlyMap<string, AnySetting> = new Map(
  ALL_SETTINGS.filter((s) => s.flag).map((s) => [s.flag!, s]),
);
export const SETTING_BY_SHORTHAND: ReadonlyMap<string, AnySetting> = new Map(
  ALL_SETTINGS.filter((s) => s.shorthand).map((s) => [s.shorthand!, s]),
);
export const SETTING_BY_FIELD: ReadonlyMap<string, AnySetting> = new Map(
  ALL_SETTINGS.filter((s) => s.field).map((s) => [s.field!, s]),
);

/** Nested objects of KubeletConfiguration (authentication, authentication.x509, logging.options, ...). */
export const CONFIG_STRUCTS: ReadonlySet<string> = new Set(
  [...SETTING_BY_FIELD.keys()].flatMap((f) => {
    const parts = f.split('.');
    return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('.'));
  }),
);

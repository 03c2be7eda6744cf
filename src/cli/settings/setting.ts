// One setting of the agent, defined once: its kubelet flag, its KubeletConfiguration field, its
// default, how its value is read and checked, its help text, and whether bootlet honours it.
import type { ValueType } from './value-types.js';

/**
 * - `applied`: bootlet does what the kubelet does with it.
 * - `not-implemented`: accepted so that kubelet command lines and files work; a value other than the
 *   default is named in the one start-up warning.
 * - `no-effect`: the kubelet itself no longer acts on it (deprecated no-ops); accepted silently.
 */
export type SettingStatus = 'applied' | 'not-implemented' | 'no-effect';

export interface SettingSpec<T> {
  /** The kubelet flag, without dashes. */
  readonly flag?: string;
  /** One-letter form (`-v`). */
  readonly shorthand?: string;
  /** The KubeletConfiguration (v1beta1) field path, e.g. `authentication.x509.clientCAFile`. */
  readonly field?: string;
  readonly type: ValueType<T>;
  /** bootlet's default. Absent: unset unless given. */
  readonly default?: T;
  /** The kubelet's default where bootlet's differs (the README says why in `note`). */
  readonly kubeletDefault?: T;
  /**
   * The Go field is a pointer: an explicit zero in the file is a value (`healthzPort: 0` turns the
   * port off). Otherwise a zero value in the file means "use the default", as the kubelet's
   * SetDefaults_KubeletConfiguration does for `0s`, `""` and `0`.
   */
  readonly pointer?: boolean;
  /** A relative path in the config file is taken from the file's directory (KubeletConfigurationPathRefs). */
  readonly configRelative?: boolean;
  /** The kubelet's defaulting beyond zero values (podPidsLimit: any negative number becomes -1). */
  normalize?(value: T): T;
  /** The kubelet's validation of the final value: the reason it is refused, or undefined. */
  validate?(value: T): string | undefined;
  readonly help: string;
  readonly status: SettingStatus;
  /** The kubelet's deprecation text for the flag, printed as pflag prints it when the flag is used. */
  readonly deprecated?: string;
  /** How bootlet differs from the kubelet, for the README. */
  readonly note?: string;
}

/** `R` is the type the resolved options hold: T, or T | undefined for a setting without a default. */
export interface Setting<T = unknown, R = T> extends SettingSpec<T> {
  /** Type-level only. */
  readonly resolved?: R;
}

/** Any setting (method signatures keep Setting<string> assignable here). */
export type AnySetting = Setting<unknown, unknown>;

/** A setting that always has a value. */
export function setting<T>(spec: SettingSpec<T> & { default: T }): Setting<T, T> {
  return spec;
}

/** A setting that may stay unset (a file path nobody gave). */
export function optionalSetting<T>(spec: SettingSpec<T>): Setting<T, T | undefined> {
  return spec;
}

/** The value of the kubelet's default, which decides whether a value is worth a warning. */
export function kubeletDefaultOf(s: AnySetting): unknown {
  return s.kubeletDefault !== undefined ? s.kubeletDefault : s.default;
}

export function flagName(s: AnySetting): string | undefined {
  return s.flag === undefined ? undefined : `--${s.flag}`;
}

/** How the setting is named to a person: the field when it has one, else the flag. */
export function displayName(s: AnySetting): string {
  return s.field ?? `--${s.flag ?? '?'}`;
}

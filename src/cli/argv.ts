// The command line, parsed in one place with the kubelet's rules (spf13/pflag): `--name=value` or
// `--name value`; a bool flag alone means true and takes a value only as `--name=false`; `-v 2`,
// `-v=2` and `-v2`; `_` in a name reads as `-`; a repeated flag replaces the earlier value, except
// lists and maps, which add to it. Empty arguments (an empty variable in a systemd ExecStart) are
// skipped.
import type { AnySetting } from './settings/setting.js';
import { SETTING_BY_FLAG, SETTING_BY_SHORTHAND } from './settings/table.js';
import { errorMessage } from '../util/error-message.js';

export class UsageError extends Error {
  override name = 'UsageError';
}

export interface GivenFlag {
  readonly value: unknown;
  /** The last occurrence as written, for messages: `--sync-frequency=0s`. */
  readonly written: string;
  readonly text: string;
}

export type FlagValues = ReadonlyMap<AnySetting, GivenFlag>;

export type Command =
  | {
      kind: 'run';
      flags: FlagValues;
      /** The kubelet's deprecation lines, as pflag prints them. */ deprecations: string[];
    }
  | { kind: 'help' }
  /** `kubelet`: `--version` as the kubelet prints it; `raw`: `--version=raw`; `bootlet`: `bootlet version`. */
  | { kind: 'version'; format: 'kubelet' | 'raw' | 'bootlet' };

const normalize = (name: string): string => name.replace(/_/g, '-');

function looksLikeBoolValue(s: string): boolean {
  return /^(true|false|t|f|1|0|TRUE|FALSE|True|False)$/.test(s);
}

export function parseCommandLine(argv: readonly string[]): Command {
  let args = argv.filter((a) => a !== '');
  if (args[0] === 'version') return { kind: 'version', format: 'bootlet' };
  if (args[0] === 'help') return { kind: 'help' };
  if (args[0] === 'run') args = args.slice(1);

  const values = new Map<AnySetting, GivenFlag>();
  const deprecations: string[] = [];
  let help = false;
  let version: 'kubelet' | 'raw' | undefined;
  let lastBoolFlag: string | undefined;

  const set = (s: AnySetting, name: string, text: string, written: string): void => {
    let value: unknown;
    try {
      value = s.type.fromFlag(text, values.get(s)?.value);
    } catch (err) {
      throw new UsageError(`invalid value ${JSON.stringify(text)} for flag ${name}: ${errorMessage(err)}`);
    }
    values.set(s, { value, written, text });
    const line = s.deprecated && `Flag --${s.flag} has been deprecated, ${s.deprecated}`;
    if (line && !deprecations.includes(line)) deprecations.push(line);
  };

  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const boolBefore = lastBoolFlag;
    lastBoolFlag = undefined;
    if (arg === '--') {
      const rest = args.slice(i + 1);
      if (rest.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(rest[0])} after "--"`);
      break;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = normalize(eq < 0 ? arg.slice(2) : arg.slice(2, eq));
      let text = eq < 0 ? undefined : arg.slice(eq + 1);
      if (name === 'help') {
        help = text === undefined || text === 'true';
        continue;
      }
      if (name === 'version') {
        if (text === undefined || text === 'true') version = 'kubelet';
        else if (text === 'raw') version = 'raw';
        else if (text === 'false') version = undefined;
        else
          throw new UsageError(`invalid value ${JSON.stringify(text)} for flag --version: must be true, false or raw`);
        continue;
      }
      const s = SETTING_BY_FLAG.get(name);
      if (!s) throw new UsageError(`unknown flag: --${name}${name === '' ? ' (a lone "--" ends the flags)' : ''}`);
      if (text === undefined) {
        if (s.type.isBool) {
          text = 'true';
          lastBoolFlag = `--${name}`;
        } else {
          // pflag takes the next argument whatever it looks like.
          if (i + 1 >= args.length) throw new UsageError(`flag needs an argument: --${name}`);
          text = args[++i]!;
        }
      }
      set(s, `--${name}`, text, eq < 0 && !s.type.isBool ? `--${name} ${text}` : arg);
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      const c = arg[1]!;
      if (c === 'h') {
        help = true;
        continue;
      }
      const s = SETTING_BY_SHORTHAND.get(c);
      if (!s) {
        const long = arg.slice(1).split('=')[0]!;
        const hint = SETTING_BY_FLAG.has(normalize(long)) ? ` (did you mean -${arg}?)` : '';
        throw new UsageError(`unknown shorthand flag: '${c}' in ${arg}${hint}`);
      }
      let text = arg.slice(2);
      if (text.startsWith('=')) text = text.slice(1);
      else if (text === '') {
        if (i + 1 >= args.length) throw new UsageError(`flag needs an argument: '${c}' in -${c}`);
        text = args[++i]!;
      }
      set(s, `-${c}`, text, arg);
      continue;
    }
    const hint =
      boolBefore && looksLikeBoolValue(arg)
        ? ` (a bool flag takes its value as ${boolBefore}=${arg})`
        : ' (flags look like --name=value; see --help)';
    throw new UsageError(`unexpected argument ${JSON.stringify(arg)}${hint}`);
  }

  if (help) return { kind: 'help' };
  if (version) return { kind: 'version', format: version };
  return { kind: 'run', flags: values, deprecations };
}

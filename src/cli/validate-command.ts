// `bootlet validate [FILE|DIR]... [--config F] [--hostname-override NAME] [-o json]`: checks
// manifests and a KubeletConfiguration exactly as the agent would read them (same code, same
// defaulting, same UID for this node and path), for an operator before dropping a file in, or a CI
// job over a manifests repository. Exit 0: all good (warnings allowed); 1: something refused,
// or a command line it cannot use (src/cli/usage-error.ts). Nothing a manifest names is ever run.
import { UsageError, parseCommandLine } from './argv.js';
import { ConfigFileError } from './kubelet-config.js';
import { nodeNameFrom, type BootletOptions } from './options.js';
import { resolveOptions } from './resolve-options.js';
import { checkManifests, PathError, type FileCheck } from '../config/validate/check-manifests.js';
import { errorMessage } from '../util/error-message.js';
import { usageError } from './usage-error.js';

export const VALIDATE_USAGE = `Usage: bootlet validate [FILE|DIR]... [--config FILE] [--hostname-override NAME] [-o json]

Checks static pod manifests, and the KubeletConfiguration given with --config, exactly as the agent
would read them: the same parser and limits, defaulting, rules and UID, the same file names ignored
in a directory, and the same rule for two files that declare one pod. Nothing is started.
With no FILE or DIR it checks the manifest path of --config (default /etc/kubernetes/manifests).
  --config FILE              a KubeletConfiguration, checked as the agent reads it
  --hostname-override NAME   the node name the UIDs and pod names are computed for (default: this host's)
  -o, --output json          one JSON document instead of one line per file
Exit status: 0 all accepted (warnings allowed), 1 something refused or a usage error.`;

interface ValidateArgs {
  paths: string[];
  config?: string;
  hostnameOverride?: string;
  json: boolean;
}

interface ConfigCheck {
  readonly file: string;
  readonly result: 'accepted' | 'refused';
  readonly reason?: string;
  readonly warnings: string[];
}

export interface ValidateReport {
  readonly config?: ConfigCheck;
  readonly files: FileCheck[];
  readonly summary: { accepted: number; refused: number; ignored: number; warnings: number };
}

function parseArgs(argv: readonly string[]): ValidateArgs {
  const a: ValidateArgs = { paths: [], json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      a.paths.push(...argv.slice(i + 1));
      break;
    }
    const m = /^(--config|--hostname-override|-o|--output)(?:=(.*))?$/.exec(arg) ?? /^(-o)(.+)$/.exec(arg);
    if (!m) {
      if (arg.startsWith('-')) throw new UsageError(`unknown flag ${JSON.stringify(arg)}`);
      a.paths.push(arg);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === '') throw new UsageError(`${m[1]} needs a value`);
    if (m[1] === '--config') a.config = value;
    else if (m[1] === '--hostname-override') a.hostnameOverride = value;
    else if (value === 'json') a.json = true;
    else throw new UsageError(`invalid output format ${JSON.stringify(value)}: only json`);
  }
  return a;
}

/** The config file through the agent's own reader and checks; its settings when it is accepted. */
function checkConfig(file: string): { check: ConfigCheck; opts?: BootletOptions } {
  try {
    const cmd = parseCommandLine([`--config=${file}`]);
    if (cmd.kind !== 'run') throw new UsageError('unexpected command');
    const opts = resolveOptions(cmd.flags, cmd.deprecations);
    const n = opts.notes;
    const warnings = [
      ...n.unknownFields.map((f) => `unknown field ${JSON.stringify(f)} (not in KubeletConfiguration v1beta1)`),
      ...n.duplicateFields.map((f) => `field given twice: ${f}; the last one counts`),
      ...n.notImplemented.map((f) => `${f} is set but bootlet does not implement it`),
      ...n.skipped,
    ];
    return { check: { file, result: 'accepted', warnings }, opts };
  } catch (err) {
    if (err instanceof ConfigFileError || err instanceof UsageError)
      return { check: { file, result: 'refused', reason: err.message, warnings: [] } };
    throw err;
  }
}

export async function validate(args: ValidateArgs): Promise<ValidateReport> {
  let config: ConfigCheck | undefined;
  let manifestPath = '/etc/kubernetes/manifests';
  let nodeName = nodeNameFrom(args.hostnameOverride);
  if (args.config !== undefined) {
    const c = checkConfig(args.config);
    config = c.check;
    if (c.opts) {
      manifestPath = c.opts.podManifestPath;
      if (args.hostnameOverride === undefined) nodeName = c.opts.nodeName;
    }
  }
  const paths = args.paths.length > 0 ? args.paths : config?.result === 'refused' ? [] : [manifestPath];
  const files = await checkManifests(paths, { nodeName });
  const count = (r: FileCheck['result']): number => files.filter((f) => f.result === r).length;
  const warnings =
    files.reduce((n, f) => n + ('warnings' in f ? f.warnings.length : 0), 0) + (config?.warnings.length ?? 0);
  return {
    config,
    files,
    summary: {
      accepted: count('accepted'),
      refused: count('refused') + (config?.result === 'refused' ? 1 : 0),
      ignored: count('ignored'),
      warnings,
    },
  };
}

function lineOf(c: FileCheck): string[] {
  const out: string[] = [];
  if (c.result === 'accepted') out.push(`${c.file}: accepted: pod ${c.pod} (uid ${c.uid})`);
  else if (c.result === 'ignored') out.push(`${c.file}: ignored: ${c.reason}`);
  else
    out.push(
      `${c.file}${c.line !== undefined ? `:${c.line}${c.column !== undefined ? `:${c.column}` : ''}` : ''}: refused: ${c.reason}`,
    );
  if ('warnings' in c) for (const w of c.warnings) out.push(`${c.file}: warning: ${w}`);
  return out;
}

export function formatReport(r: ValidateReport): string {
  const lines: string[] = [];
  if (r.config) {
    lines.push(
      r.config.result === 'accepted'
        ? `${r.config.file}: accepted: KubeletConfiguration`
        : `refused: ${r.config.reason}`,
    );
    for (const w of r.config.warnings) lines.push(`${r.config.file}: warning: ${w}`);
  }
  for (const f of r.files) lines.push(...lineOf(f));
  const s = r.summary;
  lines.push(`${s.accepted} accepted, ${s.refused} refused, ${s.ignored} ignored, ${s.warnings} warnings`);
  return lines.join('\n') + '\n';
}

/** Returns the exit code: 0, or 1 for a refused file or a usage error (the reason written to `err`). */
export async function runValidateCommand(
  argv: string[],
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    out(VALIDATE_USAGE + '\n');
    return 0;
  }
  let args: ValidateArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    return usageError('validate', errorMessage(e), err, VALIDATE_USAGE);
  }
  let report: ValidateReport;
  try {
    report = await validate(args);
  } catch (e) {
    if (e instanceof PathError) {
      return usageError('validate', e.message, err);
    }
    throw e;
  }
  out(args.json ? JSON.stringify(report, null, 2) + '\n' : formatReport(report));
  return report.summary.refused > 0 ? 1 : 0;
}

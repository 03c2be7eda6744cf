// Resolves every setting as the kubelet does: its default, then the config file (already defaulted
// for zero values), then the command line, which wins; then the kubelet's checks, each error naming
// the flag or the file, line and field. Settings bootlet does not implement are collected for the
// one start-up warning when they hold anything but the kubelet's default.
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { UsageError, type FlagValues } from './argv.js';
import { ConfigFileError, loadKubeletConfig, type ConfigValue, type LoadedKubeletConfig } from './kubelet-config.js';
import { nodeIPFrom, nodeNameFrom, type BootletOptions, type StartupNotes } from './options.js';
import { displayName, kubeletDefaultOf, type AnySetting } from './settings/setting.js';
import { ALL_SETTINGS, OPTION_SETTINGS, optionKeyOf, type ResolvedSettings } from './settings/table.js';
import { sameValue } from './settings/value-types.js';

function configFileOf(flags: FlagValues): string | undefined {
  const v = flags.get(OPTION_SETTINGS.configFile)?.value;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The kubelet merges --feature-gates into the file's featureGates key by key; other flags replace. */
function combine(s: AnySetting, fromFile: ConfigValue | undefined, fromFlag: unknown): unknown {
  if (s === OPTION_SETTINGS.featureGates && fromFile) return { ...(fromFile.value as object), ...(fromFlag as object) };
  return fromFlag;
}

function refuse(
  s: AnySetting,
  reason: string,
  flagText: string | undefined,
  file: LoadedKubeletConfig | undefined,
  at: ConfigValue | undefined,
): never {
  if (flagText !== undefined)
    throw new UsageError(`invalid value ${JSON.stringify(flagText)} for flag --${s.flag}: ${reason}`);
  if (file && at) throw new ConfigFileError(`${file.file}:${at.line}: ${s.field}: ${reason}`);
  throw new UsageError(`${displayName(s)}: ${reason}`);
}

export function resolveOptions(flags: FlagValues, deprecations: string[] = []): BootletOptions {
  const configPath = configFileOf(flags);
  const file = configPath ? loadKubeletConfig(configPath) : undefined;
  const notes: StartupNotes = {
    notImplemented: [],
    unknownFields: file?.unknownFields ?? [],
    duplicateFields: file?.duplicateFields ?? [],
    deprecations,
    skipped: [],
  };
  const resolved: Record<string, unknown> = {};

  for (const s of ALL_SETTINGS) {
    const flag = flags.get(s);
    const fromFile = file?.values.get(s);
    let value: unknown = flag ? combine(s, fromFile, flag.value) : fromFile ? fromFile.value : s.default;
    if (value !== undefined && s.normalize) value = s.normalize(value);
    if (value !== undefined && (flag || fromFile)) {
      const reason = s.validate?.(value);
      if (reason) refuse(s, reason, flag?.text, file, fromFile);
      if (s.status === 'not-implemented' && !sameValue(value, kubeletDefaultOf(s))) {
        notes.notImplemented.push(flag ? `--${s.flag}` : (s.field ?? `--${s.flag}`));
      }
    }
    const key = optionKeyOf(s);
    if (key) resolved[key] = value;
  }

  const o = resolved as ResolvedSettings;
  // A file that sets nodeStatusUpdateFrequency but not nodeStatusReportFrequency reports at the
  // update frequency (the kubelet's defaulting keeps old configurations' behaviour).
  const update = file?.values.get(OPTION_SETTINGS.nodeStatusUpdateFrequencyMs);
  if (update && !file?.values.has(OPTION_SETTINGS.nodeStatusReportFrequencyMs))
    o.nodeStatusReportFrequencyMs = update.value as number;
  // The kubelet skips clusterDNS entries that are not IPs, with a log line.
  const dns = o.clusterDNS.filter((a) => isIP(a) !== 0);
  notes.skipped.push(
    ...o.clusterDNS.filter((a) => isIP(a) === 0).map((a) => `clusterDNS ${JSON.stringify(a)} is not an IP address`),
  );
  o.clusterDNS = dns;
  // As the kubelet's run(): with cgroups per QoS and no --cgroup-root, the pods' root is "/".
  if (o.cgroupsPerQOS && o.cgroupRoot === '') o.cgroupRoot = '/';

  // The kubelet loads the pair together: one without the other cannot be served.
  if (!o.tlsCertFile !== !o.tlsPrivateKeyFile) {
    const given = o.tlsCertFile ? 'tlsCertFile (--tls-cert-file)' : 'tlsPrivateKeyFile (--tls-private-key-file)';
    throw new UsageError(
      `${given} is set without its pair: give both tlsCertFile and tlsPrivateKeyFile, or neither for a self-signed certificate`,
    );
  }

  // As the kubelet's ValidateKubeletConfiguration: the log query is a mode of the /logs/ handler.
  if (o.enableSystemLogQuery && !o.enableSystemLogHandler)
    throw new UsageError('invalid configuration: enableSystemLogHandler is required for enableSystemLogQuery');

  // Paths from flags are taken from the working directory (the file's are already absolute).
  const abs = (p: string): string => resolve(p);
  return {
    ...o,
    podManifestPath: abs(o.podManifestPath),
    rootDir: abs(o.rootDir),
    podLogsDir: abs(o.podLogsDir),
    configFile: o.configFile && abs(o.configFile),
    kubeconfig: o.kubeconfig && abs(o.kubeconfig),
    bootstrapKubeconfig: o.bootstrapKubeconfig && abs(o.bootstrapKubeconfig),
    certDir: o.certDir ? abs(o.certDir) : join(abs(o.rootDir), 'pki'),
    tlsCertFile: o.tlsCertFile && abs(o.tlsCertFile),
    tlsPrivateKeyFile: o.tlsPrivateKeyFile && abs(o.tlsPrivateKeyFile),
    clientCAFile: o.clientCAFile && abs(o.clientCAFile),
    resolvConf: o.resolvConf === '' ? '' : abs(o.resolvConf),
    nodeName: nodeNameFrom(o.hostnameOverride || undefined),
    nodeIP: nodeIPFrom(o.nodeIP),
    notes,
  };
}

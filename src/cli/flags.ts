// The command line, with the kubelet's flag names. Unknown flags and bad values are errors that
// name the flag: bootlet never silently ignores what an operator asked for.
import { isIP } from 'node:net';
import type { Taint } from 'kubernetes-types/core/v1';
import { parseNodeLabels, parseTaints } from '../apiserver/node-flags.js';
import { parseDuration } from './duration.js';

export interface FlagValues {
  podManifestPath?: string;
  containerRuntimeEndpoint?: string;
  hostnameOverride?: string;
  nodeIP?: string;
  config?: string;
  rootDir?: string;
  verbosity?: number;
  loggingFormat?: 'text' | 'json';
  fileCheckFrequencyMs?: number;
  syncFrequencyMs?: number;
  runtimeRequestTimeoutMs?: number;
  healthzPort?: number;
  healthzBindAddress?: string;
  readOnlyPort?: number;
  address?: string;
  kubeconfig?: string;
  bootstrapKubeconfig?: string;
  certDir?: string;
  rotateCertificates?: boolean;
  nodeLabels?: Record<string, string>;
  registerWithTaints?: Taint[];
  registerNode?: boolean;
}

export type Command = { kind: 'run'; flags: FlagValues } | { kind: 'version' } | { kind: 'help' };

export class UsageError extends Error {
  override name = 'UsageError';
}

interface FlagSpec {
  key: keyof FlagValues;
  help: string;
  parse: (raw: string, flag: string) => FlagValues[keyof FlagValues];
  placeholder: string;
  /** The value of the bare flag (`--rotate-certificates`), for booleans as pflag has them. */
  bare?: string;
}

const text = (raw: string, flag: string): string => {
  if (raw.trim() === '') throw new UsageError(`invalid value "" for flag ${flag}: must not be empty`);
  return raw;
};

const port = (raw: string, flag: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`invalid value "${raw}" for flag ${flag}: must be a port number 0-65535 (0 disables)`);
  return n;
};

const ip = (raw: string, flag: string): string => {
  if (isIP(raw) === 0) throw new UsageError(`invalid value "${raw}" for flag ${flag}: not an IP address`);
  return raw;
};

const labels = (raw: string, flag: string): Record<string, string> => {
  try {
    return parseNodeLabels(raw);
  } catch (err) {
    throw new UsageError(`invalid value "${raw}" for flag ${flag}: ${(err as Error).message}`);
  }
};

const taints = (raw: string, flag: string): Taint[] => {
  try {
    return parseTaints(raw);
  } catch (err) {
    throw new UsageError(`invalid value "${raw}" for flag ${flag}: ${(err as Error).message}`);
  }
};

const bool = (raw: string, flag: string): boolean => {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new UsageError(`invalid value "${raw}" for flag ${flag}: must be true or false`);
};

const duration = (raw: string, flag: string): number => {
  try {
    return parseDuration(raw);
  } catch (err) {
    throw new UsageError(`invalid value "${raw}" for flag ${flag}: ${(err as Error).message}`);
  }
};

export const FLAGS: Record<string, FlagSpec> = {
  'pod-manifest-path': { key: 'podManifestPath', parse: text, placeholder: 'DIR|FILE', help: 'Directory (or single file) of static pod manifests (default /etc/kubernetes/manifests)' },
  'container-runtime-endpoint': { key: 'containerRuntimeEndpoint', parse: text, placeholder: 'URL', help: 'CRI endpoint (default unix:///run/containerd/containerd.sock)' },
  'hostname-override': { key: 'hostnameOverride', parse: text, placeholder: 'NAME', help: 'Node name to use instead of the hostname' },
  'node-ip': { key: 'nodeIP', placeholder: 'IP', help: 'IP address of the node (default: the first non-loopback IPv4 address)', parse: ip },
  config: { key: 'config', parse: text, placeholder: 'FILE', help: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags win over it' },
  'root-dir': { key: 'rootDir', parse: text, placeholder: 'DIR', help: 'Directory for pod volumes and state (default /var/lib/kubelet)' },
  v: {
    key: 'verbosity',
    placeholder: 'N',
    help: 'Log verbosity (0-10)',
    parse: (raw, flag) => {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 0) throw new UsageError(`invalid value "${raw}" for flag ${flag}: must be a non-negative integer`);
      return n;
    },
  },
  'logging-format': {
    key: 'loggingFormat',
    placeholder: 'text|json',
    help: 'Log format: text (klog) or json',
    parse: (raw, flag) => {
      if (raw !== 'text' && raw !== 'json') throw new UsageError(`invalid value "${raw}" for flag ${flag}: must be "text" or "json"`);
      return raw;
    },
  },
  'file-check-frequency': { key: 'fileCheckFrequencyMs', parse: duration, placeholder: 'DURATION', help: 'Full rescan of the manifest path, a safety net for missed events (default 20s)' },
  'sync-frequency': { key: 'syncFrequencyMs', parse: duration, placeholder: 'DURATION', help: 'Periodic resync of every pod (default 1m)' },
  'healthz-port': { key: 'healthzPort', parse: port, placeholder: 'PORT', help: '/healthz port (default 10248; 0 disables)' },
  'healthz-bind-address': { key: 'healthzBindAddress', parse: ip, placeholder: 'IP', help: '/healthz address (default 127.0.0.1)' },
  'read-only-port': { key: 'readOnlyPort', parse: port, placeholder: 'PORT', help: 'Unauthenticated /pods, /metrics, /healthz (default 10255 on 127.0.0.1; 0 disables)' },
  address: { key: 'address', parse: ip, placeholder: 'IP', help: 'Address of the read-only port (default 127.0.0.1: it has no authentication)' },
  kubeconfig: { key: 'kubeconfig', parse: text, placeholder: 'FILE', help: 'kubeconfig of the API server; without it bootlet runs standalone' },
  'bootstrap-kubeconfig': { key: 'bootstrapKubeconfig', parse: text, placeholder: 'FILE', help: 'kubeconfig to request a client certificate with when --kubeconfig is missing or its certificate unusable' },
  'cert-dir': { key: 'certDir', parse: text, placeholder: 'DIR', help: 'Directory of the client certificate pairs (default <root-dir>/pki)' },
  'rotate-certificates': { key: 'rotateCertificates', parse: bool, bare: 'true', placeholder: '[=true|false]', help: 'Request a new client certificate before the current one expires (default false)' },
  'node-labels': { key: 'nodeLabels', parse: labels, placeholder: 'K=V,...', help: 'Labels to register the Node with' },
  'register-with-taints': { key: 'registerWithTaints', parse: taints, placeholder: 'K=V:EFFECT,...', help: 'Taints to register the Node with' },
  'register-node': { key: 'registerNode', parse: bool, placeholder: 'true|false', help: 'Create the Node object (default true); false: only use one that exists' },
  'runtime-request-timeout': { key: 'runtimeRequestTimeoutMs', parse: duration, placeholder: 'DURATION', help: 'Timeout of CRI calls except image pulls (default 2m)' },
};

/** Kubelet flags that exist but that this version of bootlet does not implement. */
const KNOWN_UNSUPPORTED = new Set(['cgroup-driver', 'manifest-url', 'manifest-url-header', 'cluster-dns', 'cluster-domain', 'port', 'tls-cert-file', 'tls-private-key-file', 'feature-gates']);

function parseFlags(args: string[]): FlagValues {
  const out: FlagValues = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const m = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new UsageError(`unexpected argument "${arg}" (flags look like --name=value; see --help)`);
    const name = m[1];
    const spec = FLAGS[name];
    if (!spec) {
      if (KNOWN_UNSUPPORTED.has(name)) throw new UsageError(`flag --${name} is a kubelet flag that bootlet does not support yet`);
      throw new UsageError(`unknown flag: --${name} (see --help)`);
    }
    let raw = m[2];
    if (raw === undefined && spec.bare !== undefined) raw = spec.bare;
    if (raw === undefined) {
      raw = args[i + 1];
      if (raw === undefined || raw.startsWith('--')) throw new UsageError(`flag needs an argument: --${name}`);
      i++;
    }
    (out as Record<string, unknown>)[spec.key] = spec.parse(raw, `--${name}`);
  }
  return out;
}

export function parseCommandLine(argv: string[]): Command {
  const [first, ...rest] = argv;
  if (first === 'version' || first === '--version') return { kind: 'version' };
  if (first === 'help' || argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  if (first === 'run') return { kind: 'run', flags: parseFlags(rest) };
  return { kind: 'run', flags: parseFlags(argv) };
}

export function usage(): string {
  const lines = [
    'bootlet: a static-pod node agent. Runs the Pod manifests in a directory through the CRI.',
    '',
    'Usage:',
    '  bootlet [flags]        run the agent',
    '  bootlet version        print the version',
    '  bootlet pods [-o wide|json] [--read-only-port N]',
    '                         list the running agent\'s pods, like kubectl get pods',
    '',
    'Flags (named as the kubelet names them; flags win over --config):',
  ];
  for (const [name, spec] of Object.entries(FLAGS)) {
    lines.push(`  --${name} ${spec.placeholder}`.padEnd(44) + spec.help);
  }
  return lines.join('\n');
}

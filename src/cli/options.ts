// The agent's settings: defaults, then the config file, then flags (flags win, as in the kubelet).
import { hostname, networkInterfaces } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Taint } from 'kubernetes-types/core/v1';
import { defaultCertDir } from '../apiserver/client-credentials.js';
import { UsageError, type FlagValues } from './flags.js';
import { loadKubeletConfig } from './kubelet-config.js';

export interface BootletOptions {
  podManifestPath: string;
  containerRuntimeEndpoint: string;
  nodeName: string;
  nodeIP: string;
  rootDir: string;
  podLogsDir: string;
  fileCheckFrequencyMs: number;
  syncFrequencyMs: number;
  runtimeRequestTimeoutMs: number;
  verbosity: number;
  loggingFormat: 'text' | 'json';
  containerLogMaxSizeBytes: number;
  containerLogMaxFiles: number;
  containerLogMonitorIntervalMs: number;
  healthzPort: number;
  healthzBindAddress: string;
  readOnlyPort: number;
  address: string;
  /** Absent: standalone, no API server. */
  kubeconfig?: string;
  /** Requests a client certificate when the kubeconfig is missing or unusable. */
  bootstrapKubeconfig?: string;
  certDir: string;
  rotateCertificates: boolean;
  nodeLabels: Record<string, string>;
  registerWithTaints: Taint[];
  registerNode: boolean;
  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  nodeLeaseDurationSeconds: number;
  configFile?: string;
  /** KubeletConfiguration fields present but not implemented; warned about at start. */
  ignoredConfigFields: string[];
}

export const DEFAULTS = {
  podManifestPath: '/etc/kubernetes/manifests',
  containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
  rootDir: '/var/lib/kubelet',
  podLogsDir: '/var/log/pods',
  fileCheckFrequencyMs: 20_000,
  syncFrequencyMs: 60_000,
  runtimeRequestTimeoutMs: 120_000,
  verbosity: 0,
  loggingFormat: 'text' as const,
  containerLogMaxSizeBytes: 10 * 1024 * 1024,
  containerLogMaxFiles: 5,
  containerLogMonitorIntervalMs: 10_000,
  healthzPort: 10248,
  healthzBindAddress: '127.0.0.1',
  // The kubelet disables its read-only port when a config file is used; bootlet keeps it, on
  // loopback only, because it has no authentication and `bootlet pods` reads it.
  readOnlyPort: 10255,
  address: '127.0.0.1',
  registerNode: true,
  rotateCertificates: false,
  nodeStatusUpdateFrequencyMs: 10_000,
  nodeStatusReportFrequencyMs: 300_000,
  nodeLeaseDurationSeconds: 40,
};

/** The node name as the kubelet makes it: override or hostname, trimmed and lowercased. */
export function nodeNameFrom(override: string | undefined): string {
  return (override ?? hostname()).trim().toLowerCase();
}

export function detectNodeIP(): string {
  const all = Object.values(networkInterfaces()).flat();
  const v4 = all.find((a) => a && a.family === 'IPv4' && !a.internal);
  const v6 = all.find((a) => a && a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'));
  return v4?.address ?? v6?.address ?? '127.0.0.1';
}

function positive(name: string, ms: number): number {
  if (!(ms > 0)) throw new UsageError(`${name} must be greater than 0`);
  return ms;
}

export function resolveOptions(flags: FlagValues): BootletOptions {
  const file = flags.config ? loadKubeletConfig(flags.config) : undefined;
  const cfg = file?.values ?? {};
  const pick = <T>(flag: T | undefined, fromFile: T | undefined, dflt: T): T => flag ?? fromFile ?? dflt;
  return {
    podManifestPath: resolve(pick(flags.podManifestPath, cfg.staticPodPath, DEFAULTS.podManifestPath)),
    containerRuntimeEndpoint: pick(flags.containerRuntimeEndpoint, cfg.containerRuntimeEndpoint, DEFAULTS.containerRuntimeEndpoint),
    nodeName: nodeNameFrom(flags.hostnameOverride),
    nodeIP: flags.nodeIP ?? detectNodeIP(),
    rootDir: resolve(flags.rootDir ?? DEFAULTS.rootDir),
    podLogsDir: resolve(cfg.podLogsDir ?? DEFAULTS.podLogsDir),
    fileCheckFrequencyMs: positive('fileCheckFrequency', pick(flags.fileCheckFrequencyMs, cfg.fileCheckFrequencyMs, DEFAULTS.fileCheckFrequencyMs)),
    syncFrequencyMs: positive('syncFrequency', pick(flags.syncFrequencyMs, cfg.syncFrequencyMs, DEFAULTS.syncFrequencyMs)),
    runtimeRequestTimeoutMs: positive('runtimeRequestTimeout', pick(flags.runtimeRequestTimeoutMs, cfg.runtimeRequestTimeoutMs, DEFAULTS.runtimeRequestTimeoutMs)),
    verbosity: pick(flags.verbosity, cfg.verbosity, DEFAULTS.verbosity),
    loggingFormat: pick(flags.loggingFormat, cfg.loggingFormat, DEFAULTS.loggingFormat),
    containerLogMaxSizeBytes: cfg.containerLogMaxSizeBytes ?? DEFAULTS.containerLogMaxSizeBytes,
    containerLogMaxFiles: cfg.containerLogMaxFiles ?? DEFAULTS.containerLogMaxFiles,
    containerLogMonitorIntervalMs: positive('containerLogMonitorInterval', cfg.containerLogMonitorIntervalMs ?? DEFAULTS.containerLogMonitorIntervalMs),
    healthzPort: pick(flags.healthzPort, cfg.healthzPort, DEFAULTS.healthzPort),
    healthzBindAddress: pick(flags.healthzBindAddress, cfg.healthzBindAddress, DEFAULTS.healthzBindAddress),
    readOnlyPort: pick(flags.readOnlyPort, cfg.readOnlyPort, DEFAULTS.readOnlyPort),
    address: pick(flags.address, cfg.address, DEFAULTS.address),
    kubeconfig: flags.kubeconfig ?? (cfg.kubeconfig ? resolve(dirname(flags.config ?? '.'), cfg.kubeconfig) : undefined),
    bootstrapKubeconfig: flags.bootstrapKubeconfig ? resolve(flags.bootstrapKubeconfig) : undefined,
    certDir: resolve(flags.certDir ?? defaultCertDir(resolve(flags.rootDir ?? DEFAULTS.rootDir))),
    rotateCertificates: pick(flags.rotateCertificates, cfg.rotateCertificates, DEFAULTS.rotateCertificates),
    nodeLabels: flags.nodeLabels ?? {},
    registerWithTaints: flags.registerWithTaints ?? cfg.registerWithTaints ?? [],
    registerNode: pick(flags.registerNode, cfg.registerNode, DEFAULTS.registerNode),
    nodeStatusUpdateFrequencyMs: positive('nodeStatusUpdateFrequency', cfg.nodeStatusUpdateFrequencyMs ?? DEFAULTS.nodeStatusUpdateFrequencyMs),
    nodeStatusReportFrequencyMs: positive('nodeStatusReportFrequency', cfg.nodeStatusReportFrequencyMs ?? DEFAULTS.nodeStatusReportFrequencyMs),
    nodeLeaseDurationSeconds: cfg.nodeLeaseDurationSeconds ?? DEFAULTS.nodeLeaseDurationSeconds,
    configFile: flags.config,
    ignoredConfigFields: file?.ignored ?? [],
  };
}

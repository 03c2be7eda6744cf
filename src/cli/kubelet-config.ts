// Reads a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1), the way kubeadm writes it.
// The fields bootlet implements are applied; the others are named once in a warning, so a
// kubeadm-written file works and nobody is misled into thinking a setting took effect.
import { readFileSync } from 'node:fs';
import type { Taint } from 'kubernetes-types/core/v1';
import { isIP } from 'node:net';
import { parse } from 'yaml';
import { parseQuantity } from '../runtime/quantity.js';
import { parseDuration } from './duration.js';

export interface KubeletConfigValues {
  staticPodPath?: string;
  containerRuntimeEndpoint?: string;
  podLogsDir?: string;
  fileCheckFrequencyMs?: number;
  syncFrequencyMs?: number;
  runtimeRequestTimeoutMs?: number;
  loggingFormat?: 'text' | 'json';
  verbosity?: number;
  containerLogMaxSizeBytes?: number;
  containerLogMaxFiles?: number;
  containerLogMonitorIntervalMs?: number;
  healthzPort?: number;
  healthzBindAddress?: string;
  readOnlyPort?: number;
  address?: string;
  kubeconfig?: string;
  registerNode?: boolean;
  rotateCertificates?: boolean;
  registerWithTaints?: Taint[];
  nodeStatusUpdateFrequencyMs?: number;
  nodeStatusReportFrequencyMs?: number;
  nodeLeaseDurationSeconds?: number;
}

export interface LoadedKubeletConfig {
  values: KubeletConfigValues;
  /** Field names present in the file that bootlet does not implement. */
  ignored: string[];
}

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

const APPLIED = new Set([
  'apiVersion',
  'kind',
  'staticPodPath',
  'containerRuntimeEndpoint',
  'podLogsDir',
  'fileCheckFrequency',
  'syncFrequency',
  'runtimeRequestTimeout',
  'logging',
  'containerLogMaxSize',
  'containerLogMaxFiles',
  'containerLogMonitorInterval',
  'healthzPort',
  'healthzBindAddress',
  'readOnlyPort',
  'address',
  'kubeconfig',
  'registerNode',
  'rotateCertificates',
  'registerWithTaints',
  'nodeStatusUpdateFrequency',
  'nodeStatusReportFrequency',
  'nodeLeaseDurationSeconds',
]);

function str(file: string, obj: Record<string, unknown>, field: string): string | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v === '') throw new ConfigFileError(`${file}: ${field}: must be a non-empty string`);
  return v;
}

function dur(file: string, obj: Record<string, unknown>, field: string): number | undefined {
  const v = str(file, obj, field);
  if (v === undefined) return undefined;
  try {
    return parseDuration(v);
  } catch (err) {
    throw new ConfigFileError(`${file}: ${field}: ${(err as Error).message}`);
  }
}

function quantity(file: string, obj: Record<string, unknown>, field: string): number | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  try {
    const bytes = parseQuantity(v as string | number).value();
    if (bytes <= 0) throw new Error('must be greater than 0');
    return bytes;
  } catch (err) {
    throw new ConfigFileError(`${file}: ${field}: ${JSON.stringify(v)} is not a valid quantity (e.g. 10Mi): ${(err as Error).message}`);
  }
}

function count(file: string, obj: Record<string, unknown>, field: string, min: number): number | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (!Number.isInteger(v) || (v as number) < min) throw new ConfigFileError(`${file}: ${field}: must be an integer of at least ${min}`);
  return v as number;
}

function portField(file: string, obj: Record<string, unknown>, field: string): number | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 65535) throw new ConfigFileError(`${file}: ${field}: must be a port number 0-65535`);
  return v as number;
}

function ipField(file: string, obj: Record<string, unknown>, field: string): string | undefined {
  const v = str(file, obj, field);
  if (v !== undefined && isIP(v) === 0) throw new ConfigFileError(`${file}: ${field}: ${JSON.stringify(v)} is not an IP address`);
  return v;
}

function boolField(file: string, obj: Record<string, unknown>, field: string): boolean | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ConfigFileError(`${file}: ${field}: must be true or false`);
  return v;
}

const EFFECTS = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);

function taintsField(file: string, obj: Record<string, unknown>, field: string): Taint[] | undefined {
  const v = obj[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new ConfigFileError(`${file}: ${field}: must be a list of taints`);
  return v.map((t: unknown, i) => {
    const o = t as Partial<Taint> | null;
    if (!o || typeof o.key !== 'string' || !o.key || !EFFECTS.has(String(o.effect))) {
      throw new ConfigFileError(`${file}: ${field}[${i}]: needs a key and an effect (NoSchedule, PreferNoSchedule or NoExecute)`);
    }
    return { key: o.key, effect: o.effect as string, ...(o.value !== undefined ? { value: String(o.value) } : {}) };
  });
}

export function parseKubeletConfig(file: string, content: string): LoadedKubeletConfig {
  let doc: unknown;
  try {
    doc = parse(content, { prettyErrors: true });
  } catch (err) {
    throw new ConfigFileError(`${file}: ${(err as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ConfigFileError(`${file}: not a KubeletConfiguration object`);
  const obj = doc as Record<string, unknown>;
  if (obj.kind !== 'KubeletConfiguration') throw new ConfigFileError(`${file}: kind is ${JSON.stringify(obj.kind ?? null)}, want "KubeletConfiguration"`);
  if (obj.apiVersion !== 'kubelet.config.k8s.io/v1beta1') {
    throw new ConfigFileError(`${file}: apiVersion is ${JSON.stringify(obj.apiVersion ?? null)}, want "kubelet.config.k8s.io/v1beta1"`);
  }
  const values: KubeletConfigValues = {
    staticPodPath: str(file, obj, 'staticPodPath'),
    containerRuntimeEndpoint: str(file, obj, 'containerRuntimeEndpoint'),
    podLogsDir: str(file, obj, 'podLogsDir'),
    fileCheckFrequencyMs: dur(file, obj, 'fileCheckFrequency'),
    syncFrequencyMs: dur(file, obj, 'syncFrequency'),
    runtimeRequestTimeoutMs: dur(file, obj, 'runtimeRequestTimeout'),
    containerLogMaxSizeBytes: quantity(file, obj, 'containerLogMaxSize'),
    containerLogMaxFiles: count(file, obj, 'containerLogMaxFiles', 2),
    containerLogMonitorIntervalMs: dur(file, obj, 'containerLogMonitorInterval'),
    healthzPort: portField(file, obj, 'healthzPort'),
    healthzBindAddress: ipField(file, obj, 'healthzBindAddress'),
    readOnlyPort: portField(file, obj, 'readOnlyPort'),
    address: ipField(file, obj, 'address'),
    kubeconfig: str(file, obj, 'kubeconfig'),
    registerNode: boolField(file, obj, 'registerNode'),
    rotateCertificates: boolField(file, obj, 'rotateCertificates'),
    registerWithTaints: taintsField(file, obj, 'registerWithTaints'),
    nodeStatusUpdateFrequencyMs: dur(file, obj, 'nodeStatusUpdateFrequency'),
    nodeStatusReportFrequencyMs: dur(file, obj, 'nodeStatusReportFrequency'),
    nodeLeaseDurationSeconds: count(file, obj, 'nodeLeaseDurationSeconds', 1),
  };
  const logging = obj.logging;
  if (logging !== undefined && logging !== null) {
    if (typeof logging !== 'object') throw new ConfigFileError(`${file}: logging: must be an object`);
    const l = logging as Record<string, unknown>;
    if (l.format !== undefined) {
      if (l.format !== 'text' && l.format !== 'json') throw new ConfigFileError(`${file}: logging.format: must be "text" or "json"`);
      values.loggingFormat = l.format;
    }
    if (l.verbosity !== undefined) {
      if (!Number.isInteger(l.verbosity) || (l.verbosity as number) < 0) throw new ConfigFileError(`${file}: logging.verbosity: must be a non-negative integer`);
      values.verbosity = l.verbosity as number;
    }
  }
  if (values.podLogsDir !== undefined && !values.podLogsDir.startsWith('/')) throw new ConfigFileError(`${file}: podLogsDir: must be an absolute path`);
  const ignored = Object.keys(obj).filter((k) => !APPLIED.has(k));
  return { values, ignored };
}

export function loadKubeletConfig(file: string): LoadedKubeletConfig {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigFileError(`cannot read config file ${file}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  return parseKubeletConfig(file, content);
}

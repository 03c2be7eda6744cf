// The agent's resolved options: every setting of the table that reaches the agent (typed from the
// table), plus what is derived from them, plus what the start-up log must say about them.
import { hostname, networkInterfaces } from 'node:os';
import type { ResolvedSettings } from './settings/table.js';

export interface StartupNotes {
  /** Flags and fields set to something bootlet does not do, for the one start-up warning. */
  notImplemented: string[];
  /** Config file fields that are not in KubeletConfiguration v1beta1. */
  unknownFields: string[];
  /** Config file fields given twice. */
  duplicateFields: string[];
  /** The kubelet's deprecation lines for the flags used. */
  deprecations: string[];
  /** Values the kubelet skips with a log line (an invalid clusterDNS entry). */
  skipped: string[];
}

export interface BootletOptions extends Omit<ResolvedSettings, 'certDir'> {
  /** --cert-dir, or `<root-dir>/pki` (the kubelet's /var/lib/kubelet/pki with the default root dir). */
  certDir: string;
  /** From --hostname-override or the hostname, as the kubelet makes it. */
  nodeName: string;
  /** From --node-ip (its first address) or the first non-loopback address. */
  nodeIP: string;
  notes: StartupNotes;
}

/** The node name as the kubelet makes it: override or hostname, trimmed and lowercased. */
export function nodeNameFrom(override: string | undefined): string {
  return (override ?? hostname()).trim().toLowerCase();
}

/** The first non-loopback address, IPv4 first unless `preferIPv6` (--node-ip=::). */
export function detectNodeIP(preferIPv6 = false): string {
  const all = Object.values(networkInterfaces()).flat();
  const v4 = all.find((a) => a && a.family === 'IPv4' && !a.internal);
  const v6 = all.find((a) => a && a.family === 'IPv6' && !a.internal && !a.address.startsWith('fe80'));
  const [first, second] = preferIPv6 ? [v6, v4] : [v4, v6];
  return first?.address ?? second?.address ?? '127.0.0.1';
}

/** --node-ip as the kubelet reads it: `0.0.0.0` or `::` mean "detect, preferring that family". */
export function nodeIPFrom(flag: string | undefined): string {
  const first = flag?.split(',')[0]?.trim();
  if (first === undefined || first === '') return detectNodeIP();
  if (first === '0.0.0.0' || first === '::') return detectNodeIP(first === '::');
  return first;
}

// Parsers for --node-labels and --register-with-taints, in the kubelet's syntax, with its rule that
// a node may not give itself labels under kubernetes.io / k8s.io except the kubelet's own (the
// NodeRestriction admission plugin would refuse the registration otherwise).
import type { Taint } from 'kubernetes-types/core/v1';
import { isKubeletLabel, isKubernetesNamespace, labelNamespace } from '../../k8s/node-labels.js';

export class NodeFlagError extends Error {
  override readonly name = 'NodeFlagError';
}

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

function isKubeletLabelAllowed(key: string): boolean {
  return !isKubernetesNamespace(labelNamespace(key)) || isKubeletLabel(key);
}

const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function isQualifiedName(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? '' : key.slice(0, slash);
  if (slash >= 0 && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) return false;
  return name.length > 0 && NAME.test(name);
}

/** `--node-labels a=b,c=d` (a key alone is an empty value, as in the kubelet). */
export function parseNodeLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    const value = eq < 0 ? '' : part.slice(eq + 1).trim();
    if (!isQualifiedName(key))
      throw new NodeFlagError(`--node-labels: ${JSON.stringify(key)} is not a valid label key`);
    if (!NAME.test(value))
      throw new NodeFlagError(`--node-labels: ${JSON.stringify(value)} is not a valid label value`);
    if (!isKubeletLabelAllowed(key))
      throw new NodeFlagError(
        `--node-labels: a node may not set label ${key} on itself (only its own kubernetes.io labels, kubelet.kubernetes.io/* and node.kubernetes.io/*; node-role labels are set by an admin)`,
      );
    out[key] = value;
  }
  return out;
}

/** `--register-with-taints key=value:Effect,key:Effect`. */
export function parseTaints(text: string): Taint[] {
  return text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((part) => {
      const colon = part.lastIndexOf(':');
      if (colon <= 0)
        throw new NodeFlagError(`--register-with-taints: ${JSON.stringify(part)} is not key[=value]:Effect`);
      const effect = part.slice(colon + 1);
      if (!EFFECTS.includes(effect))
        throw new NodeFlagError(
          `--register-with-taints: effect ${JSON.stringify(effect)} is not one of ${EFFECTS.join(', ')}`,
        );
      const kv = part.slice(0, colon);
      const eq = kv.indexOf('=');
      const key = eq < 0 ? kv : kv.slice(0, eq);
      if (!key) throw new NodeFlagError(`--register-with-taints: ${JSON.stringify(part)} has no key`);
      return eq < 0 ? { key, effect } : { key, value: kv.slice(eq + 1), effect };
    });
}

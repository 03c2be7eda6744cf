// The downward API's values as a downwardAPI volume file holds them (the kubelet's
// fieldpath.ExtractFieldPathAsString and resource.ExtractResourceValueByContainerName): pure, so
// the volume writer (node) and whoever else needs them compute the same text.
import type { Container, Pod, ResourceFieldSelector } from 'kubernetes-types/core/v1';
import type { NodeAllocatable } from './node-allocatable.js';
import { parseQuantity } from './quantity.js';

export class DownwardApiError extends Error {
  override name = 'DownwardApiError';
}

const SUBSCRIPT_RE = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** Go's strconv.Quote for the common cases: what `%q` prints in FormatMap. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\x07') out += '\\a';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\v') out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** fieldpath.FormatMap: `key="value"` lines in key order, no newline after the last. */
export function formatMap(m: Readonly<Record<string, string>> | undefined): string {
  return Object.keys(m ?? {})
    .sort()
    .map((k) => `${k}=${goQuote(m![k]!)}`)
    .join('\n');
}

/** The metadata paths both env and volumes may name (one label or annotation, name, namespace, uid); undefined for any other. */
export function metadataFieldValue(pod: Pod, fieldPath: string): string | undefined {
  const md = pod.metadata ?? {};
  const sub = SUBSCRIPT_RE.exec(fieldPath);
  if (sub) return (sub[1] === 'labels' ? md.labels : md.annotations)?.[sub[2]!] ?? '';
  switch (fieldPath) {
    case 'metadata.name':
      return md.name ?? '';
    case 'metadata.namespace':
      return md.namespace ?? '';
    case 'metadata.uid':
      return md.uid ?? '';
    default:
      return undefined;
  }
}

/** The fieldRef paths a downwardAPI volume may name, and their text. */
export function volumeFieldValue(pod: Pod, fieldPath: string): string {
  const md = pod.metadata ?? {};
  const own = metadataFieldValue(pod, fieldPath);
  if (own !== undefined) return own;
  switch (fieldPath) {
    case 'metadata.labels':
      return formatMap(md.labels);
    case 'metadata.annotations':
      return formatMap(md.annotations);
    default:
      throw new DownwardApiError(`unsupported fieldPath: ${fieldPath}`);
  }
}

/**
 * A resourceFieldRef's value for `container`, rounded up to whole divisor units; a limit the
 * container does not set is the node's allocatable, as the kubelet reports it.
 */
export function resourceFieldValue(container: Container, ref: ResourceFieldSelector, node: NodeAllocatable): string {
  const divisor =
    ref.divisor !== undefined && !parseQuantity(ref.divisor).isZero() ? parseQuantity(ref.divisor) : parseQuantity('1');
  const dot = ref.resource.indexOf('.');
  const kind = ref.resource.slice(0, dot);
  const resource = ref.resource.slice(dot + 1);
  if (dot === -1 || (kind !== 'limits' && kind !== 'requests'))
    throw new DownwardApiError(`unsupported container resource : ${ref.resource}`);
  const given = (kind === 'limits' ? container.resources?.limits : container.resources?.requests)?.[resource];
  if (resource === 'cpu') {
    const milli = given !== undefined ? parseQuantity(given).milliValue() : kind === 'limits' ? node.cpuMillis : 0;
    return String(Math.ceil(milli / divisor.milliValue()));
  }
  if (resource === 'memory' || resource === 'ephemeral-storage') {
    const fallback = resource === 'memory' ? node.memoryBytes : node.ephemeralStorageBytes;
    const bytes = given !== undefined ? parseQuantity(given).value() : kind === 'limits' ? fallback : 0;
    return String(Math.ceil(bytes / divisor.value()));
  }
  throw new DownwardApiError(`unsupported container resource : ${ref.resource}`);
}

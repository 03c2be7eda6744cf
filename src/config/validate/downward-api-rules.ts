// The downward API's selectors as the API server checks them (validateObjectFieldSelector,
// validateContainerResourceFieldSelector): a fieldPath the v1 conversion knows, then one the env or
// the volume supports; a resource the downward API exposes, with a divisor it accepts. An unknown
// path would otherwise fail the container (env) or the volume at every sync instead of the file.
import type { ObjectFieldSelector, ResourceFieldSelector } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { parseQuantity } from '../../k8s/quantity.js';
import { isQualifiedName } from './api-formats';
import { invalid, required, unsupported } from './field-errors';

/** The field labels the v1 conversion knows (ConvertDownwardAPIFieldLabel); `spec.host` is the old name of spec.nodeName. */
const CONVERTIBLE_FIELD_LABELS = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
]);

/** What an env var may name (sorted, as the API server lists them). */
export const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
] as const;
/** What a downwardAPI volume file may name. */
export const VOLUME_FIELD_PATHS = [
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
] as const;

const RESOURCE_FIELD_PATHS = [
  'limits.cpu',
  'limits.ephemeral-storage',
  'limits.memory',
  'requests.cpu',
  'requests.ephemeral-storage',
  'requests.memory',
] as const;
const HUGEPAGES_PREFIXES = ['limits.hugepages-', 'requests.hugepages-'];
const CPU_DIVISORS = new Set(['1m', '1']);
const BYTE_DIVISORS = new Set(['1', '1k', '1M', '1G', '1T', '1P', '1E', '1Ki', '1Mi', '1Gi', '1Ti', '1Pi', '1Ei']);
const BYTE_DIVISORS_TEXT = '1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei';

/** fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['app']` -> ['metadata.labels', 'app']. */
function splitSubscript(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const s = fieldPath.slice(0, -2);
  const at = s.indexOf("['");
  return at > 0 ? [s.slice(0, at), s.slice(at + 2)] : undefined;
}

/** The conversion's error, or the internal field label. */
function convertFieldLabel(apiVersion: string, label: string): { error: string } | { label: string } {
  if (apiVersion !== 'v1') return { error: `unsupported pod version: ${apiVersion}` };
  const sub = splitSubscript(label);
  if (sub)
    return sub[0] === 'metadata.annotations' || sub[0] === 'metadata.labels'
      ? { label }
      : { error: `field label does not support subscript: ${label}` };
  if (label === 'spec.host') return { label: 'spec.nodeName' };
  return CONVERTIBLE_FIELD_LABELS.has(label) ? { label } : { error: `field label not supported: ${label}` };
}

export function validateFieldRef(
  fs: ObjectFieldSelector,
  supported: readonly string[],
  p: readonly PathPart[],
  out: string[],
): void {
  if (!fs.apiVersion) return void out.push(required([...p, 'apiVersion']));
  if (!fs.fieldPath) return void out.push(required([...p, 'fieldPath']));
  const converted = convertFieldLabel(fs.apiVersion, fs.fieldPath);
  if ('error' in converted)
    return void out.push(invalid([...p, 'fieldPath'], fs.fieldPath, `error converting fieldPath: ${converted.error}`));
  const sub = splitSubscript(converted.label);
  if (sub) {
    const name = sub[0] === 'metadata.annotations' ? sub[1].toLowerCase() : sub[1];
    for (const m of isQualifiedName(name)) out.push(invalid(p, name, m));
  } else if (!supported.includes(converted.label))
    out.push(unsupported([...p, 'fieldPath'], converted.label, supported));
}

function divisorProblem(resource: string, divisor: string): string | undefined {
  if (resource === 'limits.cpu' || resource === 'requests.cpu')
    return CPU_DIVISORS.has(divisor) ? undefined : "only divisor's values 1m and 1 are supported with the cpu resource";
  const kind =
    resource === 'limits.memory' || resource === 'requests.memory'
      ? 'memory'
      : resource === 'limits.ephemeral-storage' || resource === 'requests.ephemeral-storage'
        ? 'local ephemeral storage'
        : HUGEPAGES_PREFIXES.some((x) => resource.startsWith(x))
          ? 'hugepages'
          : undefined;
  if (kind === undefined || BYTE_DIVISORS.has(divisor)) return undefined;
  return `only divisor's values ${BYTE_DIVISORS_TEXT} are supported with the ${kind} resource`;
}

/** `volume`: a volume file must name its container; an env var means its own. */
export function validateResourceFieldRef(
  fs: ResourceFieldSelector,
  p: readonly PathPart[],
  volume: boolean,
  out: string[],
): void {
  if (volume && !fs.containerName) out.push(required([...p, 'containerName']));
  else if (!fs.resource) out.push(required([...p, 'resource']));
  else if (
    !(RESOURCE_FIELD_PATHS as readonly string[]).includes(fs.resource) &&
    !HUGEPAGES_PREFIXES.some((x) => fs.resource.startsWith(x))
  ) {
    out.push(unsupported([...p, 'resource'], fs.resource, RESOURCE_FIELD_PATHS));
  }
  if (fs.divisor === undefined) return;
  const divisor = parseQuantity(fs.divisor);
  if (divisor.isZero()) return;
  const problem = divisorProblem(fs.resource ?? '', divisor.canonical());
  if (problem) out.push(invalid([...p, 'divisor'], fs.resource ?? '', problem));
}

// The annotations ValidatePodSpecificAnnotations gives meaning to, beyond the deprecated AppArmor
// and seccomp ones (profile-annotation-rules.ts): a mirror pod's needs a node; the old tolerations
// annotation must be a JSON list of valid tolerations; the pod deletion cost (PodDeletionCost, on
// since 1.22) a 32-bit integer written plainly.
import type { Pod, Toleration } from 'kubernetes-types/core/v1';
import { key } from '../field-path';
import { invalid } from './field-errors';
import { validateTolerations } from './scheduling-rules';

const MIRROR = 'kubernetes.io/config.mirror';
const TOLERATIONS = 'scheduler.alpha.kubernetes.io/tolerations';
const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
const ANNOTATIONS = ['metadata', 'annotations'];
const INT32 = { min: -2147483648, max: 2147483647 };
const TOLERATION_FIELDS: Record<string, 'string' | 'number'> = {
  key: 'string',
  operator: 'string',
  value: 'string',
  effect: 'string',
  tolerationseconds: 'number',
};

/** GetDeletionCostFromPodAnnotations: no '+', no leading zero, then strconv.ParseInt(v, 10, 32). */
function isDeletionCost(v: string): boolean {
  if (!/^(-[0-9]+|0|[1-9][0-9]*)$/.test(v)) return false;
  const n = Number(v);
  return Number.isInteger(n) && n >= INT32.min && n <= INT32.max;
}

/** json.Unmarshal of the annotation into []core.Toleration (field names matched without case, as Go does). */
function parseTolerations(text: string): Toleration[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return `invalid character in JSON: ${(err as Error).message}`;
  }
  if (parsed === null) return [];
  if (!Array.isArray(parsed)) return `json: cannot unmarshal ${typeof parsed} into Go value of type []core.Toleration`;
  const out: Toleration[] = [];
  for (const item of parsed) {
    if (item === null) {
      out.push({});
      continue;
    }
    if (typeof item !== 'object' || Array.isArray(item))
      return `json: cannot unmarshal ${Array.isArray(item) ? 'array' : typeof item} into Go value of type core.Toleration`;
    const t: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(item as Record<string, unknown>)) {
      const want = TOLERATION_FIELDS[k.toLowerCase()];
      if (!want || v === null) continue;
      if (typeof v !== want)
        return `json: cannot unmarshal ${typeof v} into Go struct field Toleration.${k} of type ${want === 'number' ? 'int64' : 'string'}`;
      t[k.toLowerCase() === 'tolerationseconds' ? 'tolerationSeconds' : k.toLowerCase()] = v;
    }
    out.push(t as Toleration);
  }
  return out;
}

export function validatePodAnnotations(pod: Pod, out: string[]): void {
  const a = pod.metadata?.annotations ?? {};
  if (MIRROR in a && !pod.spec?.nodeName)
    out.push(
      invalid([...ANNOTATIONS, key(MIRROR)], a[MIRROR], 'must set spec.nodeName if mirror pod annotation is set'),
    );
  if (a[TOLERATIONS]) {
    const tolerations = parseTolerations(a[TOLERATIONS]);
    if (typeof tolerations === 'string') out.push(invalid(ANNOTATIONS, TOLERATIONS, tolerations));
    else validateTolerations(tolerations, [...ANNOTATIONS, TOLERATIONS], out);
  }
  if (DELETION_COST in a && !isDeletionCost(a[DELETION_COST] ?? ''))
    out.push(invalid([...ANNOTATIONS, key(DELETION_COST)], a[DELETION_COST] ?? '', 'must be a 32bit integer'));
}

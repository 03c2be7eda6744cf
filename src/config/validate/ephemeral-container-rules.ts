// What an ephemeral container may not have, as the API server checks it when one is added
// (validateEphemeralContainers): only the fields of the allow list set (no ports, resources, probes,
// lifecycle, resize or restart policy), no subPath, and a target container of the pod's own. Only
// an API pod has them: ValidatePodCreate refuses them on create, so a static pod never does.
import type { Container, EphemeralContainer } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { forbidden, notFound } from './field-errors';

/** The fields of EphemeralContainerCommon the allow list leaves out, in the Go struct's order. */
const NOT_ALLOWED = [
  'ports',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'restartPolicyRules',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
] as const;
const TEXT = 'cannot be set for an Ephemeral Container';

/** Go's reflect.DeepEqual against the zero value: JSON's null, {}, [] and the scalars' zeros are unset. */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.values(v).every(isZero);
}

export function validateEphemeralContainer(
  ec: EphemeralContainer,
  p: readonly PathPart[],
  podContainers: readonly Container[],
  out: string[],
): void {
  const target = ec.targetContainerName;
  if (target && !podContainers.some((c) => c.name === target))
    out.push(notFound([...p, 'targetContainerName'], target));
  const rec = ec as unknown as Record<string, unknown>;
  for (const k of NOT_ALLOWED) if (!isZero(rec[k])) out.push(forbidden([...p, k], TEXT));
  (ec.volumeMounts ?? []).forEach((m, i) => {
    if (m.subPath) out.push(forbidden([...p, 'volumeMounts', i, 'subPath'], TEXT));
    if (m.subPathExpr) out.push(forbidden([...p, 'volumeMounts', i, 'subPathExpr'], TEXT));
  });
}

// The deprecated AppArmor and seccomp annotations as the API server checks them
// (ValidateAppArmorPodAnnotations, ValidateSeccompPodAnnotations: on create and on every update):
// an AppArmor annotation names a container of the pod and a profile of a known form; a seccomp one a
// known profile, a localhost one inside the profile root. That an annotation and the field it stands
// for agree is checked on create only (ValidatePodCreate): an update may change a seccomp annotation
// (only AppArmor and mirror annotations are immutable), so an API pod can carry one that disagrees.
import type { Pod, PodSpec, SeccompProfile } from 'kubernetes-types/core/v1';
import { key, type PathPart } from '../field-path';
import { forbidden, goQuote, invalid } from './field-errors';
import { localDescendingPath } from './path-rules';
import { containersWithPaths } from './pod-containers';

const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const SECCOMP_POD = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const LOCALHOST = 'localhost/';

function seccompAnnotation(value: string, p: readonly PathPart[], out: string[]): void {
  if (value === 'runtime/default' || value === 'docker/default' || value === 'unconfined') return;
  if (value.startsWith(LOCALHOST)) localDescendingPath(p, value.slice(LOCALHOST.length), out);
  else out.push(invalid(p, value, 'must be a valid seccomp profile'));
}

function seccompMatch(value: string, field: SeccompProfile, p: readonly PathPart[], out: string[]): void {
  const typeMismatch = (): void =>
    void out.push(forbidden([...p, 'type'], 'seccomp type in annotation and field must match'));
  if (field.type === 'Unconfined' && value !== 'unconfined') typeMismatch();
  else if (field.type === 'RuntimeDefault' && value !== 'runtime/default' && value !== 'docker/default') typeMismatch();
  else if (field.type === 'Localhost') {
    if (!value.startsWith(LOCALHOST)) typeMismatch();
    else if (field.localhostProfile !== value.slice(LOCALHOST.length))
      out.push(forbidden([...p, 'localhostProfile'], 'seccomp profile in annotation and field must match'));
  }
}

function appArmorMatch(spec: PodSpec, annotations: Readonly<Record<string, string>>, out: string[]): void {
  if (spec.os?.name === 'windows') return;
  for (const [c, cp] of containersWithPaths(spec)) {
    const profile = c.securityContext?.appArmorProfile ?? spec.securityContext?.appArmorProfile;
    const value = annotations[APPARMOR_PREFIX + c.name];
    if (!profile || value === undefined) continue;
    const p = [...cp, 'securityContext', 'appArmorProfile'];
    const typeMismatch = (): void =>
      void out.push(forbidden([...p, 'type'], 'apparmor type in annotation and field must match'));
    if (profile.type === 'Unconfined' && value !== 'unconfined') typeMismatch();
    else if (profile.type === 'RuntimeDefault' && value !== 'runtime/default') typeMismatch();
    else if (profile.type === 'Localhost') {
      if (!value.startsWith(LOCALHOST)) typeMismatch();
      else if (profile.localhostProfile !== value.slice(LOCALHOST.length))
        out.push(forbidden([...p, 'localhostProfile'], 'apparmor profile in annotation and field must match'));
    }
  }
}

/** The annotations' form (ValidatePodSpecificAnnotations: every create and update). */
export function validateProfileAnnotations(pod: Pod): string[] {
  const out: string[] = [];
  const annotations = pod.metadata?.annotations ?? {};
  const spec = pod.spec ?? { containers: [] };
  const ap: PathPart[] = ['metadata', 'annotations'];
  const names = new Set(containersWithPaths(spec).map(([c]) => c.name));
  for (const [k, v] of Object.entries(annotations)) {
    const value = typeof v === 'string' ? v : '';
    if (k.startsWith(APPARMOR_PREFIX)) {
      const container = k.slice(APPARMOR_PREFIX.length);
      if (!names.has(container)) out.push(invalid([...ap, key(k)], container, 'container not found'));
      if (value !== '' && value !== 'runtime/default' && value !== 'unconfined' && !value.startsWith(LOCALHOST)) {
        out.push(invalid([...ap, key(k)], value, `invalid AppArmor profile name: ${goQuote(value)}`));
      }
    }
    // The API server names these with the key as a child field, not a [key].
    if (k === SECCOMP_POD || k.startsWith(SECCOMP_CONTAINER_PREFIX)) seccompAnnotation(value, [...ap, k], out);
  }
  return out;
}

/**
 * That each annotation agrees with the field it stands for (validateSeccompAnnotationsAndFields,
 * validateAppArmorAnnotationsAndFieldsMatchOnCreate): the rules of a pod being created.
 */
export function validateProfileAnnotationsMatchOnCreate(pod: Pod): string[] {
  const out: string[] = [];
  const annotations = pod.metadata?.annotations ?? {};
  const spec = pod.spec ?? { containers: [] };
  const podSeccomp = spec.securityContext?.seccompProfile;
  if (podSeccomp && annotations[SECCOMP_POD] !== undefined)
    seccompMatch(annotations[SECCOMP_POD]!, podSeccomp, ['spec', 'securityContext', 'seccompProfile'], out);
  for (const [c, cp] of containersWithPaths(spec)) {
    const field = c.securityContext?.seccompProfile;
    const value = annotations[SECCOMP_CONTAINER_PREFIX + c.name];
    if (field && value !== undefined) seccompMatch(value, field, [...cp, 'securityContext', 'seccompProfile'], out);
  }
  appArmorMatch(spec, annotations, out);
  return out;
}

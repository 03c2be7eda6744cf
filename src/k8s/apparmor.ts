// A container's AppArmor profile as the kubelet finds it (pkg/security/apparmor GetProfile): the
// container's field, then the deprecated per-container annotation (a static pod's annotations are
// never synced to fields), then the pod's field. And whether a pod needs AppArmor at all (any
// profile but Unconfined), which decides whether a node without AppArmor refuses it.
import type { AppArmorProfile, Container, Pod } from 'kubernetes-types/core/v1';

/** `container.apparmor.security.beta.kubernetes.io/<container>`: the deprecated form of the field. */
export const APPARMOR_CONTAINER_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
/** The deprecated values: the runtime's default, none, and a profile loaded on the node. */
export const APPARMOR_RUNTIME_DEFAULT = 'runtime/default';
export const APPARMOR_UNCONFINED = 'unconfined';
export const APPARMOR_LOCALHOST_PREFIX = 'localhost/';

function fromAnnotation(value: string | undefined): AppArmorProfile | undefined {
  if (value === undefined) return undefined;
  if (value === APPARMOR_RUNTIME_DEFAULT) return { type: 'RuntimeDefault' };
  if (value === APPARMOR_UNCONFINED) return { type: 'Unconfined' };
  if (value.startsWith(APPARMOR_LOCALHOST_PREFIX))
    return { type: 'Localhost', localhostProfile: value.slice(APPARMOR_LOCALHOST_PREFIX.length) };
  // An annotation of no known form names no profile (validation refuses it).
  return undefined;
}

/** The profile the container runs with; undefined: none asked for (the runtime's default). */
export function appArmorProfileOf(pod: Pod, container: Container): AppArmorProfile | undefined {
  return (
    container.securityContext?.appArmorProfile ??
    fromAnnotation(pod.metadata?.annotations?.[APPARMOR_CONTAINER_ANNOTATION_PREFIX + container.name]) ??
    pod.spec?.securityContext?.appArmorProfile
  );
}

/** Whether the pod asks for AppArmor confinement anywhere (isRequired): a profile that is not Unconfined. */
export function appArmorRequired(pod: Pod): boolean {
  const spec = pod.spec;
  if (spec?.securityContext?.appArmorProfile && spec.securityContext.appArmorProfile.type !== 'Unconfined') return true;
  const containers = [
    ...(spec?.initContainers ?? []),
    ...(spec?.containers ?? []),
    ...(spec?.ephemeralContainers ?? []),
  ];
  if (
    containers.some(
      (c) => c.securityContext?.appArmorProfile && c.securityContext.appArmorProfile.type !== 'Unconfined',
    )
  )
    return true;
  // The kubelet lets the first annotation in Go's map order decide; any one that confines does here.
  return Object.entries(pod.metadata?.annotations ?? {}).some(
    ([k, v]) => k.startsWith(APPARMOR_CONTAINER_ANNOTATION_PREFIX) && v !== APPARMOR_UNCONFINED,
  );
}

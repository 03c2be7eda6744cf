// The kubelet's AppArmor admit handler (lifecycle.NewAppArmorAdmitHandler over
// pkg/security/apparmor's validator): a pod that asks for a confining profile is refused on a node
// whose kernel has no AppArmor enabled, and a Localhost profile must name one. Whether the profile
// is loaded is the runtime's to check when it creates the container (containerd refuses a missing one).
import type { AppArmorProfile, Pod } from 'kubernetes-types/core/v1';
import { appArmorProfileOf, appArmorRequired } from '../k8s/apparmor.js';
import type { AppArmorHost } from '../node/apparmor-host.js';
import type { AdmitResult } from './node-facts.js';

/** lifecycle.AppArmorNotAdmittedReason. */
export const APPARMOR_NOT_ADMITTED = 'AppArmor';

/** How Go's %q prints the profile pointer the kubelet's message names. */
function goProfile(p: AppArmorProfile): string {
  return `&{${JSON.stringify(p.type)} ${JSON.stringify(p.localhostProfile ?? '')}}`;
}

function validate(pod: Pod, host: AppArmorHost): string | undefined {
  if (!appArmorRequired(pod)) return undefined;
  if (host.error !== undefined) return host.error;
  const spec = pod.spec;
  for (const c of [
    ...(spec?.initContainers ?? []),
    ...(spec?.containers ?? []),
    ...(spec?.ephemeralContainers ?? []),
  ]) {
    const p = appArmorProfileOf(pod, c);
    if (p?.type === 'Localhost' && (p.localhostProfile ?? '').trim() === '')
      return `invalid empty AppArmor profile name: ${goProfile(p)}`;
  }
  return undefined;
}

export function appArmorRefusal(pod: Pod, host: AppArmorHost): (AdmitResult & { readonly admit: false }) | undefined {
  const err = validate(pod, host);
  return err === undefined
    ? undefined
    : { admit: false, reason: APPARMOR_NOT_ADMITTED, message: `Cannot enforce AppArmor: ${err}` };
}

// Whether this host can enforce AppArmor, read once at start as the kubelet's validator does
// (runc's apparmor.IsEnabled: securityfs has an apparmor directory and the module says Y).
import { access, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Undefined error: AppArmor is enabled. Otherwise why the host cannot enforce it, in the kubelet's words. */
/** The validator's words for a host whose kernel has no AppArmor enabled. */
export const APPARMOR_NOT_ENABLED = 'AppArmor is not enabled on the host';

export interface AppArmorHost {
  readonly error?: string;
}

export async function readAppArmorHost(sysRoot = '/sys'): Promise<AppArmorHost> {
  try {
    await access(path.join(sysRoot, 'kernel/security/apparmor'));
    const enabled = await readFile(path.join(sysRoot, 'module/apparmor/parameters/enabled'), 'utf8');
    if (enabled.length > 1 && enabled.startsWith('Y')) return {};
  } catch {
    // Either missing: not enabled.
  }
  return { error: APPARMOR_NOT_ENABLED };
}

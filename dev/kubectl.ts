// The kubectl the tests drive the fake API server with: Debian sid's `kubectl` package (a static
// binary that runs on bookworm), fetched with dev/debian-packages.ts and run from where it was
// unpacked, so that a fresh Debian 12 (whose kubernetes-client is 1.20) needs no kubectl of its own.
// A machine's own /usr/bin/kubectl, when there is one, is a second client for the kubelet API tests.
import { accessSync, constants } from 'node:fs';
import * as path from 'node:path';
import { cachedDebianPackage, fetchDebianPackages } from './debian-packages.js';

/** The minor the tests are written against; a sid that moved to another is refused, not followed. */
export const DEBIAN_KUBECTL_MINOR = '1.36';

export interface KubectlBinary {
  path: string;
  /** The Debian package's version, e.g. `1.36.4+ds-1`. */
  version: string;
}

export async function debianKubectl(): Promise<KubectlBinary> {
  const prefix = `${DEBIAN_KUBECTL_MINOR}.`;
  const pkg = cachedDebianPackage('sid', 'kubectl', prefix) ?? (await fetchDebianPackages('sid', ['kubectl']))[0];
  if (!pkg) throw new Error('Debian sid: no kubectl package');
  if (!pkg.version.startsWith(prefix))
    throw new Error(
      `Debian sid's kubectl is now ${pkg.version}, not ${DEBIAN_KUBECTL_MINOR}: give dev/kubectl.ts the new minor`,
    );
  return { path: path.join(pkg.root, 'usr', 'bin', 'kubectl'), version: pkg.version };
}

export const MACHINE_KUBECTL = '/usr/bin/kubectl';

/** The machine's own kubectl, when it has an executable one. */
export function machineKubectl(): string | undefined {
  try {
    accessSync(MACHINE_KUBECTL, constants.X_OK);
    return MACHINE_KUBECTL;
  } catch {
    return undefined;
  }
}

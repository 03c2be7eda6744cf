// The kubectl of a Kubernetes release newer than the machine's, from Debian sid (dev/debian-packages.ts:
// fetched once, unpacked privately, never installed). A plain binary: no dispatcher asks /version first,
// so it also talks to a kubelet directly.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fetchDebianPackages } from '../../dev/debian-packages.js';

/** sid's kubectl (1.36.x on 2026-12-06): its path and version. */
export async function sidKubectl(): Promise<{ path: string; version: string }> {
  const [pkg] = await fetchDebianPackages('sid', ['kubectl']);
  const path = join(pkg!.root, 'usr', 'bin', 'kubectl');
  if (!existsSync(path)) throw new Error(`Debian sid's kubectl ${pkg!.version} has no ${path}`);
  return { path, version: pkg!.version };
}

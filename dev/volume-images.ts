// A data-only image for image volumes (KEP-4639): a few files, no executable, made to be mounted
// read-only into a container by the runtime, never run. Built from the text below (no host binary),
// cached under .tmp/images by a key over this file and the builder, imported like the test images.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { PrivateContainerd } from './containerd.js';
import { builderDigest, dir, file } from './images.js';
import { ociArchitecture, writeOciImage } from './oci-image.js';
import { IMAGE_CACHE } from './paths.js';

export const VOLUME_DATA_IMAGE = 'bootlet.local/volume-data:1';

/** The image's files, by path inside it: what a test reads back through the mount. */
export const VOLUME_DATA_FILES: Readonly<Record<string, string>> = {
  'greeting.txt': 'hello from an image volume\n',
  'models/v1/weights.txt': 'model weights v1\n',
  'models/v1/README': 'the v1 model\n',
};

/** Builds the tarball (a stat when it is cached) and returns its path. */
export function buildVolumeDataImage(outDir: string = IMAGE_CACHE): string {
  fs.mkdirSync(outDir, { recursive: true });
  const architecture = ociArchitecture();
  const files = Object.entries(VOLUME_DATA_FILES);
  const dirs = [...new Set(files.flatMap(([p]) => ancestors(p)))].sort();
  const key = createHash('sha256')
    .update(builderDigest(['volume-images.ts']))
    .update(architecture)
    .digest('hex')
    .slice(0, 16);
  const tarball = path.join(outDir, `volume-data-${key}.oci.tar`);
  if (!fs.existsSync(tarball)) {
    writeOciImage(
      {
        name: VOLUME_DATA_IMAGE,
        files: [...dirs.map((d) => dir(d)), ...files.map(([p, text]) => file(p, text))],
        config: {},
        architecture,
      },
      tarball,
    );
  }
  return tarball;
}

function ancestors(p: string): string[] {
  const parts = p.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}

/** Imports the image into a private containerd's k8s.io namespace. */
export async function importVolumeDataImage(c: PrivateContainerd): Promise<void> {
  await c.ctr(
    [
      'images',
      'import',
      '--snapshotter',
      c.snapshotter,
      '--platform',
      `linux/${ociArchitecture()}`,
      buildVolumeDataImage(),
    ],
    { timeoutMs: 120_000 },
  );
}

// What the node's container runtime does of image volumes (KEP-4639: CRI Mount.image and
// image_sub_path). The CRI has no word for it: StatusResponse lists no runtime or handler feature for
// image mounts, and the kubelet asks nothing; it sends the mount, and a runtime that does not know a
// field drops it. containerd 1.6 and 1.7 drop the image, so the container would run without its
// volume; containerd 2.1 mounts the image but drops image_sub_path, so a subPath mount would show the
// image's root (seen here with 2.1.9; containerd reads the field from 2.2). So bootlet reads it from
// the runtime's Version answer, the one thing the CRI says that tells: containerd mounts images from
// 2.1 and their sub paths from 2.2, CRI-O both from 1.33 (images from 1.31). Any other runtime, or a
// version that cannot be read, is taken to do neither, and admission refuses what it cannot do
// (admission/image-volumes.ts).

export interface ImageVolumeSupport {
  /** The runtime mounts an image in place of a host path. */
  readonly mounts: boolean;
  /** It mounts a directory of the image (image_sub_path), and fails the container when there is none. */
  readonly subPaths: boolean;
}

type Version = readonly [major: number, minor: number];

/** The first version of each runtime (VersionResponse.runtime_name) that mounts images, and image sub paths. */
const FIRST: Readonly<Record<string, { readonly mounts: Version; readonly subPaths: Version }>> = {
  containerd: { mounts: [2, 1], subPaths: [2, 2] },
  'cri-o': { mounts: [1, 31], subPaths: [1, 33] },
};

const NONE: ImageVolumeSupport = { mounts: false, subPaths: false };

/** `containerRuntimeVersion` as the Node reports it: `<runtime_name>://<runtime_version>`, e.g. `containerd://2.1.9`. */
export function imageVolumeSupport(containerRuntimeVersion: string): ImageVolumeSupport {
  const sep = containerRuntimeVersion.indexOf('://');
  if (sep === -1) return NONE;
  const name = containerRuntimeVersion.slice(0, sep);
  const first = Object.hasOwn(FIRST, name) ? FIRST[name] : undefined;
  // A distribution's build adds to the version (2.1.9+unknown, 2.1.9~ds1): only major.minor are read.
  const m = /^v?(\d+)\.(\d+)(?:\D|$)/.exec(containerRuntimeVersion.slice(sep + 3));
  if (!first || !m) return NONE;
  const at = (v: Version): boolean => Number(m[1]) > v[0] || (Number(m[1]) === v[0] && Number(m[2]) >= v[1]);
  return { mounts: at(first.mounts), subPaths: at(first.subPaths) };
}

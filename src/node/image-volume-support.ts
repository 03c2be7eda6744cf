// Whether the node's container runtime mounts image volumes (KEP-4639: CRI Mount.image and
// image_sub_path). The CRI has no word for it: StatusResponse lists no runtime or handler feature for
// image mounts, and the kubelet asks nothing; it sends the mount, and a runtime that does not know the
// fields drops them (containerd 1.6 and 1.7 do), so the container would run without its volume. So
// bootlet reads it from the runtime's Version answer, the one thing the CRI says that tells: containerd
// serves image mounts from 2.1, CRI-O from 1.31. Any other runtime, or a version that cannot be read,
// is taken not to, and a pod with an image volume is refused (admission/image-volumes.ts).

/** The first version of each runtime (VersionResponse.runtime_name) that mounts image volumes. */
const FIRST_WITH_IMAGE_MOUNTS: Readonly<Record<string, readonly [number, number]>> = {
  containerd: [2, 1],
  'cri-o': [1, 31],
};

/** `containerRuntimeVersion` as the Node reports it: `<runtime_name>://<runtime_version>`, e.g. `containerd://2.1.9`. */
export function runtimeMountsImages(containerRuntimeVersion: string): boolean {
  const sep = containerRuntimeVersion.indexOf('://');
  if (sep === -1) return false;
  const name = containerRuntimeVersion.slice(0, sep);
  const first = Object.hasOwn(FIRST_WITH_IMAGE_MOUNTS, name) ? FIRST_WITH_IMAGE_MOUNTS[name] : undefined;
  // A distribution's build may add to the version (2.1.9~ds1): only major.minor are read.
  const m = /^v?(\d+)\.(\d+)(?:\D|$)/.exec(containerRuntimeVersion.slice(sep + 3));
  if (!first || !m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > first[0] || (major === first[0] && minor >= first[1]);
}

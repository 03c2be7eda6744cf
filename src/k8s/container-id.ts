// A container status's `containerID` is `<runtime>://<id>` (kubecontainer.ContainerID's string form).

/** `containerd://abc` → `abc`; undefined for none, or for an id no runtime would have made. */
export function runtimeId(containerID: string | undefined): string | undefined {
  if (!containerID) return undefined;
  const i = containerID.indexOf('://');
  const id = i >= 0 ? containerID.slice(i + 3) : containerID;
  return /^[A-Za-z0-9_.-]{1,128}$/.test(id) ? id : undefined;
}

// A volumeMount's recursiveReadOnly turned into the CRI's one boolean, as the kubelet's
// resolveRecursiveReadOnly does: Enabled needs a runtime handler that says it supports recursive
// read-only mounts (StatusResponse.runtime_handlers), IfPossible takes it where there is one, and
// either needs a read-only mount without propagation. An error is the container's
// CreateContainerConfigError, in the kubelet's words.
import type { VolumeMount } from 'kubernetes-types/core/v1';

export class RecursiveReadOnlyError extends Error {
  override name = 'RecursiveReadOnlyError';
  constructor(why: string) {
    super(`failed to resolve recursive read-only mode: ${why}`);
  }
}

/** True when the mount is to be recursively read-only; throws RecursiveReadOnlyError when it cannot be. */
export function resolveRecursiveReadOnly(m: VolumeMount, runtimeSupportsRRO: boolean): boolean {
  const mode = m.recursiveReadOnly;
  if (mode === undefined || mode === 'Disabled') return false;
  const volume = JSON.stringify(m.name);
  if (m.readOnly !== true)
    throw new RecursiveReadOnlyError(`volume ${volume} requested recursive read-only mode, but it is not read-only`);
  if (m.mountPropagation !== undefined && m.mountPropagation !== 'None')
    throw new RecursiveReadOnlyError(
      `volume ${volume} requested recursive read-only mode, but it is not compatible with propagation ${JSON.stringify(m.mountPropagation)}`,
    );
  switch (mode) {
    case 'IfPossible':
      return runtimeSupportsRRO;
    case 'Enabled':
      if (!runtimeSupportsRRO)
        throw new RecursiveReadOnlyError(
          `volume ${volume} requested recursive read-only mode, but it is not supported by the runtime`,
        );
      return true;
    default:
      throw new RecursiveReadOnlyError(`unknown recursive read-only mode ${JSON.stringify(mode)}`);
  }
}

// The ways preparing or removing a pod's volumes fails, as types, so that callers can tell a
// refusal the manifest (or a container) caused from a cleanup step that is worth retrying.

/** A volume or volumeMount that cannot be prepared as written: the container is not started. */
export class VolumeError extends Error {
  override name = 'VolumeError';
}

/**
 * A subPath that leaves its volume (through a symlink, at any component) or cannot be opened
 * safely. The kubelet refuses these too (CVE-2017-1002101).
 */
export class SubPathError extends VolumeError {
  override name = 'SubPathError';
}

/**
 * A name from a manifest or a runtime label (pod uid, volume or container name) that is not safe
 * as one path component. Nothing is ever made under such a name, so there is nothing to clean up.
 */
export class UnsafePathComponentError extends Error {
  override name = 'UnsafePathComponentError';
  constructor(
    readonly what: string,
    readonly value: string,
  ) {
    super(`invalid ${what} ${JSON.stringify(value)}: not usable as a path component`);
  }
}

/**
 * A pod directory that could not be cleaned up (yet): a mount that would not go, a mount or a
 * foreign filesystem found where a recursive remove would have crossed into it, an I/O error.
 * Nothing was crossed; the caller tries again later.
 */
export class PodCleanupError extends Error {
  override name = 'PodCleanupError';
  readonly retryable = true;
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

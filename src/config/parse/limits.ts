// What a manifest may cost to read. A real static pod manifest is a few KiB with a nesting depth
// under 15; these limits are far above that and far below what hurts a node agent. Each is checked
// while parsing, before the thing it limits is built, and a manifest over one is refused with a
// message that names the limit.

/** Nesting of objects and lists. The Pod schema itself is about 12 deep. */
export const MAX_DEPTH = 64;
/**
 * Values (scalars, objects, lists) in the file, aliases counted as what they expand to. A
 * kube-apiserver manifest has about 400.
 */
export const MAX_NODES = 50_000;
/**
 * The decoded pod as JSON. Its mirror pod could never be stored by the API server beyond this
 * (etcd's default request limit is 1.5 MiB), and every copy of the pod (status, /pods, the UID
 * hash) is paid in this size.
 */
export const MAX_DECODED_BYTES = 1.5 * 1024 * 1024;
/** YAML alias nodes (`*name`). */
export const MAX_ALIASES = 100;
/**
 * Files up to this size are parsed on the event loop (a few ms for a typical manifest); larger ones
 * in a worker thread, so that one big file never holds up the agent for long.
 */
export const INLINE_PARSE_MAX_BYTES = 32 * 1024;
/**
 * And only files with at most this many structure bytes (`,` `-` `:` `[` `{` and newlines, a cheap
 * bound on the values in them): the YAML parser costs per value, not per byte, and 15,000 values fit
 * in 30 KiB (250 ms on the event loop). A kubeadm kube-apiserver manifest has about 450.
 */
export const INLINE_PARSE_MAX_STRUCTURE = 2000;

export class LimitError extends Error {
  override name = 'LimitError';
}

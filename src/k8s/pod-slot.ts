// Which pods replace each other under one name. Static pods (sources file and http) of one
// namespace/name are one pod to the kubelet: a new version waits until the old one has stopped, and
// one source's pod hides another's. An API pod is another pod even under a static pod's name (the
// kubelet keys pods by UID): both run side by side, each in a slot of its own.

/** The slot of a pod of `key` (`<namespace>/<name>`) from the config source `source`. */
export function podSlot(key: string, source: string | undefined): string {
  return source === 'api' ? `api:${key}` : key;
}

// A pod's runtimeClassName turned into the runtime handler its sandbox runs on, as the kubelet's
// RuntimeClass manager does (LookupRuntimeHandler): none named is the runtime's default handler (""),
// a named one is read from the API server's node.k8s.io/v1 RuntimeClasses, and one that is not there
// fails the sandbox in the API machinery's words. The API side implements the look-up
// (src/apiserver/pod-objects/runtime-classes.ts); without an API server (standalone) no RuntimeClass
// can be read, so a pod naming one never runs (the kubelet would run it on the default handler).

/** A RuntimeClass the look-up did not find: NotFound, as the kubelet's lister says it. */
export class RuntimeClassNotFoundError extends Error {
  override name = 'RuntimeClassNotFoundError';
  constructor(readonly runtimeClassName: string) {
    super(`runtimeclass.node.k8s.io ${JSON.stringify(runtimeClassName)} not found`);
  }
}

export interface RuntimeClasses {
  /** The `handler` of the named RuntimeClass; rejects with RuntimeClassNotFoundError when there is none. */
  handlerOf(runtimeClassName: string): Promise<string>;
}

/** Standalone: no API server to read a RuntimeClass from. */
export const NO_RUNTIME_CLASSES: RuntimeClasses = {
  handlerOf: (name) => Promise.reject(new RuntimeClassNotFoundError(name)),
};

/** The handler of the pod's RuntimeClass; "" (the default handler) when it names none. */
export function lookupRuntimeHandler(classes: RuntimeClasses, runtimeClassName: string | undefined): Promise<string> {
  return runtimeClassName ? classes.handlerOf(runtimeClassName) : Promise.resolve('');
}

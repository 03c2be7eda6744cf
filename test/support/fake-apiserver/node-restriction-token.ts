// NodeRestriction's admitServiceAccount: a node's TokenRequest must be bound to a pod (by name and
// UID) that is scheduled on that node.
import type { ApiError } from './status.js';
import type { ObjectStore } from './store.js';
import { isObject, meta, obj, str, type KObject } from './types.js';

export function admitNodeTokenRequest(
  nodeName: string,
  namespace: string,
  request: KObject | undefined,
  store: ObjectStore,
  deny: (why: string) => ApiError,
  notFound: (resource: string, name: string) => ApiError,
): ApiError | undefined {
  const ref = obj(obj(request?.spec).boundObjectRef);
  if (
    !isObject(obj(request?.spec).boundObjectRef) ||
    str(ref.apiVersion) !== 'v1' ||
    str(ref.kind) !== 'Pod' ||
    !str(ref.name)
  )
    return deny('node requested token not bound to a pod');
  if (!str(ref.uid)) return deny('node requested token with a pod binding without a uid');
  const pod = store.get('pods', namespace, str(ref.name));
  if (!pod) return notFound('pod', str(ref.name));
  if (str(ref.uid) !== meta(pod).uid)
    return deny(
      `the UID in the bound object reference (${str(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  if (str(obj(pod.spec).nodeName) !== nodeName)
    return deny('node requested token bound to a pod scheduled on a different node');
  return undefined;
}

// node.k8s.io/v1 RuntimeClasses as the API server has them: `handler` a required DNS-1123 label that
// never changes, `overhead.podFixed` quantities; the RuntimeClass admission plugin on a pod's create
// (a pod naming a RuntimeClass that does not exist is forbidden; the class's overhead is set on the
// pod, and a pod that brings a different one is forbidden), and `kubectl get runtimeclass`'s row.
// Scheduling (the class's nodeSelector and tolerations merged into the pod) is not done here.
import type { ResourceType } from './resources.js';
import { byKey } from './resources.js';
import { forbidden, type ApiError, type FieldCause } from './status.js';
import type { ObjectStore } from './store.js';
import { isObject, jsonEqual, meta, obj, str, type Json, type JsonObject, type KObject } from './types.js';
import { AGE_COLUMN, NAME_COLUMN, col, type Column } from './print/columns.js';
import { since } from './print/human-duration.js';

export const RUNTIME_CLASSES = 'runtimeclasses.node.k8s.io';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

export function isRuntimeClass(rt: ResourceType): boolean {
  return rt.storageKey === RUNTIME_CLASSES;
}

/** ValidateRuntimeClass: the handler. */
export function validateRuntimeClass(rt: ResourceType, o: KObject): FieldCause[] {
  if (!isRuntimeClass(rt)) return [];
  const handler = str((o as unknown as JsonObject).handler);
  if (!handler) return [{ type: 'FieldValueRequired', field: 'handler', detail: 'Required value' }];
  if (handler.length > 63 || !DNS1123_LABEL.test(handler))
    return [
      {
        type: 'FieldValueInvalid',
        field: 'handler',
        detail: `Invalid value: ${JSON.stringify(handler)}: ${handler.length > 63 ? 'must be no more than 63 characters' : LABEL_MSG}`,
      },
    ];
  return [];
}

/** ValidateRuntimeClassUpdate: the handler is immutable. */
export function validateRuntimeClassUpdate(rt: ResourceType, next: KObject, prev: KObject): FieldCause[] {
  if (!isRuntimeClass(rt)) return [];
  const now = str((next as unknown as JsonObject).handler);
  if (now === str((prev as unknown as JsonObject).handler)) return [];
  return [
    {
      type: 'FieldValueInvalid',
      field: 'handler',
      detail: `Invalid value: ${JSON.stringify(now)}: field is immutable`,
    },
  ];
}

/** The RuntimeClass admission plugin on a pod's create: mutates the pod, or says why it is forbidden. */
export function admitRuntimeClass(pod: KObject, store: ObjectStore): ApiError | undefined {
  const pods = byKey('pods');
  const name = str(pod.metadata.name);
  const spec = obj(pod.spec);
  const rcName = str(spec.runtimeClassName);
  if (!rcName) return undefined;
  const rc = store.get(RUNTIME_CLASSES, '', rcName) as unknown as JsonObject | undefined;
  if (!rc) return forbidden(pods, name, `pod rejected: RuntimeClass ${JSON.stringify(rcName)} not found`);
  const fixed = obj(obj(rc.overhead).podFixed);
  if (!isObject(obj(rc.overhead).podFixed)) return undefined;
  if (isObject(spec.overhead) && Object.keys(spec.overhead).length > 0 && !jsonEqual(spec.overhead, fixed))
    return forbidden(pods, name, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
  spec.overhead = { ...fixed } as Json;
  return undefined;
}

export const RUNTIME_CLASS_COLUMNS: Column[] = [
  NAME_COLUMN,
  col('Handler', 'Handler specifies the underlying runtime and configuration that the CRI implementation will use.'),
  AGE_COLUMN,
];

export function runtimeClassCells(o: KObject): Json[] {
  return [meta(o).name, str((o as unknown as JsonObject).handler), since(str(o.metadata.creationTimestamp))];
}

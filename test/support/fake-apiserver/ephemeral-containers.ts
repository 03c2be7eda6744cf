// pods/<name>/ephemeralcontainers as the real registry's EphemeralContainersStrategy: the write
// changes spec.ephemeralContainers and nothing else, and ValidatePodEphemeralContainersUpdate holds:
// containers are only added (never changed or removed), have unique names, name an existing target,
// and set none of the fields an ephemeral container may not have.
import type { ResourceType } from './resources.js';
import { invalid, type FieldCause } from './status.js';
import { arr, deepCopy, jsonEqual, obj, str, type JsonObject, type KObject } from './types.js';

/** Fields of Container that EphemeralContainer forbids (validateEphemeralContainers). */
const FORBIDDEN_FIELDS = [
  'ports',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'resizePolicy',
  'restartPolicy',
] as const;

/** The pod the ephemeralcontainers write makes: the stored pod with only its ephemeral containers replaced. */
export function prepareEphemeralContainersUpdate(
  rt: ResourceType,
  next: KObject,
  prev: KObject,
  defaultSpec: (pod: KObject) => void,
): KObject {
  const out = deepCopy(prev);
  const spec = obj(out.spec);
  const wanted = arr(obj(next.spec).ephemeralContainers);
  if (wanted.length > 0) spec.ephemeralContainers = deepCopy(wanted);
  else delete spec.ephemeralContainers;
  out.spec = spec;
  // Decoding defaults the body before the strategy compares it with what is stored.
  defaultSpec(out);
  validateEphemeralContainersUpdate(rt, str(prev.metadata.name), spec, obj(prev.spec));
  return out;
}

function validateEphemeralContainersUpdate(
  rt: ResourceType,
  name: string,
  spec: JsonObject,
  prevSpec: JsonObject,
): void {
  const causes: FieldCause[] = [];
  const list = arr(spec.ephemeralContainers).map(obj);
  const old = arr(prevSpec.ephemeralContainers).map(obj);
  const byName = new Map(list.map((c) => [str(c.name), c]));
  for (const o of old) {
    const now = byName.get(str(o.name));
    if (!now)
      causes.push({
        type: 'FieldValueForbidden',
        field: 'spec.ephemeralContainers',
        detail: `Forbidden: existing ephemeral containers "${str(o.name)}" may not be removed`,
      });
    else if (!jsonEqual(now, o))
      causes.push({
        type: 'FieldValueForbidden',
        field: 'spec.ephemeralContainers',
        detail: `Forbidden: existing ephemeral containers "${str(o.name)}" may not be changed`,
      });
  }
  const others = new Set([...arr(spec.containers), ...arr(spec.initContainers)].map((c) => str(obj(c).name)));
  const seen = new Set<string>();
  list.forEach((c, i) => {
    const path = `spec.ephemeralContainers[${i}]`;
    const n = str(c.name);
    if (!n) causes.push({ type: 'FieldValueRequired', field: `${path}.name`, detail: 'Required value' });
    else if (others.has(n) || seen.has(n))
      causes.push({ type: 'FieldValueDuplicate', field: `${path}.name`, detail: `Duplicate value: "${n}"` });
    seen.add(n);
    if (!str(c.image)) causes.push({ type: 'FieldValueRequired', field: `${path}.image`, detail: 'Required value' });
    for (const f of FORBIDDEN_FIELDS)
      if (c[f] !== undefined)
        causes.push({
          type: 'FieldValueForbidden',
          field: `${path}.${f}`,
          detail: 'Forbidden: cannot be set for an Ephemeral Container',
        });
    const resources = obj(c.resources);
    if (Object.keys(obj(resources.limits)).length > 0 || Object.keys(obj(resources.requests)).length > 0)
      causes.push({
        type: 'FieldValueForbidden',
        field: `${path}.resources`,
        detail: 'Forbidden: cannot be set for an Ephemeral Container',
      });
    const target = str(c.targetContainerName);
    if (target && !others.has(target))
      causes.push({
        type: 'FieldValueNotFound',
        field: `${path}.targetContainerName`,
        detail: `Not found: "${target}"`,
      });
  });
  if (causes.length > 0) throw invalid(rt, name, causes);
}

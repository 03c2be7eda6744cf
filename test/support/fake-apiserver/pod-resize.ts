// pods/<name>/resize as the real registry's ResizeStrategy: the write takes each container's
// `resources` and `resizePolicy` (regular containers and sidecars, matched by name) and nothing else,
// then ValidatePodResize holds: not a mirror pod, the QoS class unchanged, no running container on a
// node that reports no resources, requests and limits changed but not removed, only cpu and memory,
// a non-sidecar init container's resources not at all, a request within its limit. The API server
// does not default resizePolicy (SetDefaults_Pod has no rule for it): a missing one is the kubelet's
// NotRequired.
import { parseQuantity } from '../../../src/k8s/quantity.js';
import type { ResourceType } from './resources.js';
import { invalid, type FieldCause } from './status.js';
import { arr, deepCopy, jsonEqual, obj, str, type Json, type JsonObject, type KObject } from './types.js';

const MIRROR = 'kubernetes.io/config.mirror';
const LISTS = ['containers', 'initContainers'] as const;
const RESIZABLE = ['cpu', 'memory'];

const isSidecar = (c: JsonObject): boolean => c.restartPolicy === 'Always';

/** The pod the resize write makes: the stored pod with only the resize fields taken from `next`. */
export function prepareResizeUpdate(
  rt: ResourceType,
  next: KObject,
  prev: KObject,
  defaultSpec: (pod: KObject) => void,
  qosClass: (spec: JsonObject) => string,
): KObject {
  const out = deepCopy(prev);
  const spec = obj(out.spec);
  for (const list of LISTS) {
    const wanted = new Map(arr(obj(next.spec)[list]).map((c) => [str(obj(c).name), obj(c)]));
    spec[list] = arr(spec[list]).map((c) => {
      const stored = { ...obj(c) };
      const w = wanted.get(str(stored.name));
      if (!w) return stored;
      for (const f of ['resources', 'resizePolicy'] as const) {
        if (w[f] === undefined || w[f] === null) delete stored[f];
        else stored[f] = deepCopy(w[f]);
      }
      return stored;
    });
    if (arr(spec[list]).length === 0 && obj(prev.spec)[list] === undefined) delete spec[list];
  }
  out.spec = spec;
  defaultSpec(out);
  validatePodResize(rt, out, prev, qosClass);
  return out;
}

function amount(resource: string, q: Json | undefined): number | undefined {
  if (typeof q !== 'string' && typeof q !== 'number') return undefined;
  const v = parseQuantity(q);
  return resource === 'cpu' ? v.milliValue() : v.value();
}

function validatePodResize(
  rt: ResourceType,
  next: KObject,
  prev: KObject,
  qosClass: (spec: JsonObject) => string,
): void {
  const name = str(prev.metadata.name);
  const causes: FieldCause[] = [];
  if (str(obj(prev.metadata.annotations)[MIRROR]))
    causes.push({ type: 'FieldValueForbidden', field: 'spec', detail: 'Forbidden: static pods cannot be resized' });
  const before = str(obj(prev.status).qosClass) || qosClass(obj(prev.spec));
  const after = qosClass(obj(next.spec));
  if (before !== after)
    causes.push({
      type: 'FieldValueInvalid',
      field: 'spec',
      detail: `Invalid value: "${after}": Pod QOS Class may not change as a result of resizing`,
    });
  const runningWithout = arr(obj(prev.status).containerStatuses)
    .map(obj)
    .some((s) => obj(s.state).running !== undefined && s.resources === undefined);
  if (runningWithout)
    causes.push({
      type: 'FieldValueForbidden',
      field: 'spec',
      detail: 'Forbidden: Pod running on node without support for resize',
    });
  for (const list of LISTS) {
    const olds = arr(obj(prev.spec)[list]).map(obj);
    const news = arr(obj(next.spec)[list]).map(obj);
    olds.forEach((oc, i) => {
      const nc = news[i];
      const path = `spec.${list}[${i}].resources`;
      const or = obj(oc.resources);
      const nr = obj(nc.resources);
      if (list === 'initContainers' && !isSidecar(oc)) {
        if (!jsonEqual(or, nr))
          causes.push({
            type: 'FieldValueForbidden',
            field: path,
            detail: 'Forbidden: resources for non-sidecar init containers are immutable',
          });
        return;
      }
      for (const kind of ['requests', 'limits'] as const) {
        const had = Object.keys(obj(or[kind]));
        if (had.some((k) => obj(nr[kind])[k] === undefined))
          causes.push({
            type: 'FieldValueForbidden',
            field: `${path}.${kind}`,
            detail: `Forbidden: resource ${kind} cannot be removed`,
          });
      }
      const others = (r: JsonObject): JsonObject => {
        const out: JsonObject = {};
        for (const [k, v] of Object.entries(r)) {
          if (k !== 'requests' && k !== 'limits') {
            out[k] = v;
            continue;
          }
          const rest = Object.fromEntries(Object.entries(obj(v)).filter(([res]) => !RESIZABLE.includes(res)));
          if (Object.keys(rest).length > 0) out[k] = rest;
        }
        return out;
      };
      if (!jsonEqual(others(or), others(nr)))
        causes.push({
          type: 'FieldValueForbidden',
          field: 'spec',
          detail: 'Forbidden: only cpu and memory resources are mutable',
        });
      for (const res of RESIZABLE) {
        const req = obj(nr.requests)[res];
        const lim = obj(nr.limits)[res];
        const r = amount(res, req);
        const l = amount(res, lim);
        if (r !== undefined && l !== undefined && r > l)
          causes.push({
            type: 'FieldValueInvalid',
            field: `${path}.requests`,
            detail: `Invalid value: "${String(req)}": must be less than or equal to ${res} limit of ${String(lim)}`,
          });
      }
    });
  }
  const seen = new Set<string>();
  const unique = causes.filter((c) => !seen.has(`${c.field}|${c.detail}`) && seen.add(`${c.field}|${c.detail}`));
  if (unique.length > 0) throw invalid(rt, name, unique);
}

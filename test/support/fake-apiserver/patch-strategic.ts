import { badRequest } from './status.js';
import { deepCopy, isObject, jsonEqual, type Json, type JsonObject } from './types.js';

/** How a list at a path (indices left out) merges: by a key, as a set of primitives, or (absent) replaced. */
interface ListStrategy {
  mergeKey?: string;
  primitiveSet?: boolean;
}

const CONTAINER_LISTS: Record<string, ListStrategy> = {
  env: { mergeKey: 'name' },
  ports: { mergeKey: 'containerPort' },
  volumeMounts: { mergeKey: 'mountPath' },
  volumeDevices: { mergeKey: 'devicePath' },
};

function withContainers(prefix: string): Record<string, ListStrategy> {
  const out: Record<string, ListStrategy> = { [prefix]: { mergeKey: 'name' } };
  for (const [k, v] of Object.entries(CONTAINER_LISTS)) out[`${prefix}.${k}`] = v;
  return out;
}

const META: Record<string, ListStrategy> = {
  'metadata.ownerReferences': { mergeKey: 'uid' },
  'metadata.finalizers': { primitiveSet: true },
};

/**
 * The patchStrategy/patchMergeKey tags of k8s.io/api that matter for the kinds served. Lists without a
 * tag (e.g. pod status.containerStatuses, node spec.taints, status.images) are atomic: replaced whole.
 */
const SCHEMAS: Record<string, Record<string, ListStrategy>> = {
  pods: {
    ...META,
    ...withContainers('spec.containers'),
    ...withContainers('spec.initContainers'),
    ...withContainers('spec.ephemeralContainers'),
    'spec.volumes': { mergeKey: 'name' },
    'spec.imagePullSecrets': { mergeKey: 'name' },
    'spec.hostAliases': { mergeKey: 'ip' },
    'spec.resourceClaims': { mergeKey: 'name' },
    'spec.schedulingGates': { mergeKey: 'name' },
    'status.conditions': { mergeKey: 'type' },
    'status.podIPs': { mergeKey: 'ip' },
    'status.hostIPs': { mergeKey: 'ip' },
  },
  nodes: {
    ...META,
    'spec.podCIDRs': { primitiveSet: true },
    'status.conditions': { mergeKey: 'type' },
    'status.addresses': { mergeKey: 'type' },
  },
  namespaces: { ...META, 'status.conditions': { mergeKey: 'type' } },
  services: { ...META, 'spec.ports': { mergeKey: 'port' }, 'status.conditions': { mergeKey: 'type' } },
  serviceaccounts: { ...META, secrets: { mergeKey: 'name' }, imagePullSecrets: { mergeKey: 'name' } },
};

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM_PRIMITIVE = '$deleteFromPrimitiveList/';

/** Applies a strategic merge patch to a stored object of the given resource (storage key). */
export function strategicMergePatch(storageKey: string, target: Json, patch: Json): Json {
  if (!isObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
  const schema = SCHEMAS[storageKey] ?? META;
  return mergeMap(isObject(target) ? target : {}, patch, '', schema) ?? {};
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function mergeMap(
  target: JsonObject,
  patch: JsonObject,
  path: string,
  schema: Record<string, ListStrategy>,
): JsonObject | undefined {
  const directive = patch.$patch;
  if (directive === 'delete') return undefined;
  if (directive === 'replace') {
    const out = deepCopy(patch);
    delete out.$patch;
    return out;
  }
  const out = deepCopy(target);
  const retain = patch.$retainKeys;
  if (Array.isArray(retain)) for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith(SET_ORDER)) continue;
    if (k.startsWith(DELETE_FROM_PRIMITIVE)) {
      const field = k.slice(DELETE_FROM_PRIMITIVE.length);
      const drop = Array.isArray(v) ? v : [];
      if (Array.isArray(out[field]))
        out[field] = (out[field] as Json[]).filter((x) => !drop.some((d) => jsonEqual(d, x)));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const p = join(path, k);
    if (Array.isArray(v)) {
      out[k] = mergeList(Array.isArray(out[k]) ? (out[k] as Json[]) : [], v, p, schema);
    } else if (isObject(v)) {
      const merged = mergeMap(isObject(out[k]) ? (out[k] as JsonObject) : {}, v, p, schema);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    } else out[k] = v;
  }
  for (const [k, v] of Object.entries(patch)) {
    if (!k.startsWith(SET_ORDER) || !Array.isArray(v)) continue;
    const field = k.slice(SET_ORDER.length);
    const list = out[field];
    if (Array.isArray(list)) out[field] = reorder(list, v, schema[join(path, field)]);
  }
  return out;
}

function mergeList(target: Json[], patch: Json[], path: string, schema: Record<string, ListStrategy>): Json[] {
  const strategy = schema[path];
  if (strategy?.primitiveSet) {
    const out = deepCopy(target);
    for (const v of patch) if (!out.some((x) => jsonEqual(x, v))) out.push(deepCopy(v));
    return out;
  }
  const key = strategy?.mergeKey;
  if (!key) return deepCopy(patch.filter((p) => !(isObject(p) && p.$patch !== undefined)));
  if (patch.some((p) => isObject(p) && p.$patch === 'replace'))
    return deepCopy(patch.filter((p) => !(isObject(p) && p.$patch === 'replace')));
  const out = deepCopy(target);
  for (const item of patch) {
    if (!isObject(item)) throw badRequest(`the list at ${path} must hold objects with a "${key}"`);
    const id = item[key];
    if (id === undefined) throw badRequest(`map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`);
    const at = out.findIndex((x) => isObject(x) && jsonEqual(x[key], id));
    if (item.$patch === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (at >= 0) {
      const merged = mergeMap(out[at] as JsonObject, item, path, schema);
      if (merged === undefined) out.splice(at, 1);
      else out[at] = merged;
    } else {
      const fresh = deepCopy(item);
      delete fresh.$patch;
      out.push(fresh);
    }
  }
  return out;
}

/** $setElementOrder: listed elements first, in that order; the server's others after, as they were. */
function reorder(list: Json[], order: Json[], strategy: ListStrategy | undefined): Json[] {
  const key = strategy?.mergeKey;
  const idOf = (x: Json): Json | undefined => (key ? (isObject(x) ? x[key] : undefined) : x);
  const orderIds = order.map((o) => (key && isObject(o) ? o[key] : o));
  const picked: Json[] = [];
  for (const id of orderIds) {
    const found = list.find((x) => jsonEqual(idOf(x), id));
    if (found !== undefined) picked.push(found);
  }
  const rest = list.filter((x) => !orderIds.some((id) => jsonEqual(idOf(x), id)));
  return [...picked, ...rest];
}

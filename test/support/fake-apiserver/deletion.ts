import type { ResourceType } from './resources.js';
import type { ObjectStore } from './store.js';
import { meta, num, obj, str, type KObject } from './types.js';

function secondsFromNow(s: number): string {
  return new Date(Date.now() + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Deletes an object as the registry does, after preconditions and admission passed. A pod bound to a
 * node (and not terminal) gets a deletionTimestamp (and, the first time, a generation more) and stays
 * until a grace-0 delete; a later delete may only shorten the grace period. Everything else goes at once. Returns the object as the answer shows it.
 */
export function deleteFromStore(
  store: ObjectStore,
  rt: ResourceType,
  current: KObject,
  gracePeriodSeconds?: number,
): KObject {
  const m = meta(current);
  if (rt.resource === 'pods' && rt.group === '') {
    const spec = obj(current.spec);
    const phase = str(obj(current.status).phase);
    let grace = gracePeriodSeconds ?? num(spec.terminationGracePeriodSeconds) ?? 30;
    if (!str(spec.nodeName) || phase === 'Succeeded' || phase === 'Failed') grace = 0;
    if (grace < 0) grace = 1;
    const pending = num(current.metadata.deletionGracePeriodSeconds);
    if (current.metadata.deletionTimestamp && pending !== undefined && grace >= pending) return current;
    if (grace > 0) {
      const next = structuredClone(current);
      // The first graceful delete is a change controllers must see: rest.BeforeDelete bumps the generation.
      const generation = num(current.metadata.generation);
      if (!current.metadata.deletionTimestamp && generation !== undefined && generation > 0)
        next.metadata.generation = generation + 1;
      next.metadata.deletionTimestamp = secondsFromNow(grace);
      next.metadata.deletionGracePeriodSeconds = grace;
      return store.put(rt.storageKey, next, 'MODIFIED');
    }
  }
  // No namespace controller here: deleting a namespace takes its contents with it at once.
  if (rt.resource === 'namespaces')
    for (const key of store.keys()) {
      const [storageKey, ns, name] = key.split('/');
      if (ns === m.name) store.remove(storageKey, ns, name);
    }
  return store.remove(rt.storageKey, m.namespace, m.name) ?? current;
}

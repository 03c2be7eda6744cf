import { toTable, type IncludeObject } from '../print/table.js';
import type { ResourceType } from '../resources.js';
import type { Json, JsonObject, KObject } from '../types.js';

/** Whether the client asked for a server-side Table (kubectl get does, before plain JSON). */
export function wantsTable(accept: string): boolean {
  return accept
    .split(',')
    .map((p) => p.replace(/\s+/g, ''))
    .some(
      (p) =>
        p.includes('as=Table') &&
        p.includes('g=meta.k8s.io') &&
        (p.includes('v=v1;') || p.endsWith('v=v1') || p.includes('v=v1beta1')),
    );
}

export function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

/** A single object as served: the object itself or a one-row Table. */
export function renderOne(rt: ResourceType, o: KObject, accept: string, query: URLSearchParams): Json {
  if (wantsTable(accept)) return toTable(rt, [o], String(o.metadata.resourceVersion ?? ''), includeObject(query));
  return o as unknown as JsonObject;
}

/** A list as served: `<Kind>List` with items stripped of type meta, or a Table. */
export function renderList(
  rt: ResourceType,
  items: KObject[],
  rv: string,
  accept: string,
  query: URLSearchParams,
  cont = '',
): Json {
  if (wantsTable(accept)) {
    const t = toTable(rt, items, rv, includeObject(query));
    if (cont) (t.metadata as JsonObject).continue = cont;
    return t;
  }
  const metadata: JsonObject = { resourceVersion: rv };
  if (cont) metadata.continue = cont;
  return {
    kind: `${rt.kind}List`,
    apiVersion: rt.group ? `${rt.group}/${rt.version}` : rt.version,
    metadata,
    items: items.map((o) => {
      const copy: JsonObject = { ...(o as unknown as JsonObject) };
      delete copy.kind;
      delete copy.apiVersion;
      return copy;
    }),
  };
}

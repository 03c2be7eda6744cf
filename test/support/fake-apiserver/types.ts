/** Plain JSON as the API server stores and serves it. */
export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** Any Kubernetes object as stored: typed enough to reach metadata, loose elsewhere. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: JsonObject;
  [key: string]: Json | undefined;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepCopy<T>(v: T): T {
  return structuredClone(v);
}

export function str(v: Json | undefined): string {
  return typeof v === 'string' ? v : '';
}

export function obj(v: Json | undefined): JsonObject {
  return isObject(v) ? v : {};
}

export function arr(v: Json | undefined): Json[] {
  return Array.isArray(v) ? v : [];
}

export function num(v: Json | undefined): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

export function meta(o: KObject): {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
} {
  const m = o.metadata;
  return {
    name: str(m.name),
    namespace: str(m.namespace),
    uid: str(m.uid),
    resourceVersion: str(m.resourceVersion),
    labels: stringMap(m.labels),
    annotations: stringMap(m.annotations),
  };
}

export function stringMap(v: Json | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(obj(v))) if (typeof val === 'string') out[k] = val;
  return out;
}

export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: Json | undefined): Json | undefined {
  if (Array.isArray(v)) return v.map((x) => canonical(x) ?? null);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v).sort()) {
      const c = canonical(v[k]);
      if (c !== undefined) out[k] = c;
    }
    return out;
  }
  return v;
}

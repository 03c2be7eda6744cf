import { deepCopy, isObject, type Json } from './types.js';

/** RFC 7386 JSON merge patch: objects merge, null deletes, everything else replaces. */
export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isObject(patch)) return deepCopy(patch);
  const out = isObject(target) ? deepCopy(target) : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

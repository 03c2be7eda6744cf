import { badRequest, ApiError } from './status.js';
import { deepCopy, isObject, jsonEqual, type Json, type JsonObject } from './types.js';

type Container = Json[] | JsonObject;

function unescape(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

function tokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badRequest(`the server rejected our request due to an error in our request`);
  return pointer.slice(1).split('/').map(unescape);
}

function resolveParent(doc: Json, pointer: string): { parent: Container; key: string } {
  const t = tokens(pointer);
  if (t.length === 0) throw failed(`invalid pointer "${pointer}"`);
  let cur: Json = doc;
  for (const k of t.slice(0, -1)) {
    const next: Json | undefined = Array.isArray(cur) ? cur[Number(k)] : isObject(cur) ? cur[k] : undefined;
    if (next === undefined) throw failed(`doc is missing path: "${pointer}": missing value`);
    cur = next;
  }
  if (!Array.isArray(cur) && !isObject(cur)) throw failed(`doc is missing path: "${pointer}": missing value`);
  return { parent: cur, key: t[t.length - 1] };
}

function failed(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

function getAt(doc: Json, pointer: string): Json {
  let cur: Json | undefined = doc;
  for (const k of tokens(pointer)) {
    cur = Array.isArray(cur) ? cur[Number(k)] : isObject(cur) ? cur[k] : undefined;
    if (cur === undefined) throw failed(`doc is missing path: "${pointer}": missing value`);
  }
  return cur;
}

function add(doc: Json, pointer: string, value: Json): Json {
  if (pointer === '') return deepCopy(value);
  const { parent, key } = resolveParent(doc, pointer);
  if (Array.isArray(parent)) {
    const i = key === '-' ? parent.length : Number(key);
    if (!Number.isInteger(i) || i < 0 || i > parent.length)
      throw failed(`add operation does not apply: doc is missing path: "${pointer}"`);
    parent.splice(i, 0, deepCopy(value));
  } else parent[key] = deepCopy(value);
  return doc;
}

function remove(doc: Json, pointer: string): Json {
  const { parent, key } = resolveParent(doc, pointer);
  if (Array.isArray(parent)) {
    const i = Number(key);
    if (!(i >= 0 && i < parent.length))
      throw failed(`remove operation does not apply: doc is missing path: "${pointer}"`);
    parent.splice(i, 1);
  } else {
    if (!(key in parent)) throw failed(`remove operation does not apply: doc is missing path: "${pointer}"`);
    delete parent[key];
  }
  return doc;
}

/** RFC 6902 JSON patch. */
export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = deepCopy(target);
  for (const raw of ops) {
    if (!isObject(raw)) throw badRequest('invalid JSON patch operation');
    const op = String(raw.op);
    const path = String(raw.path ?? '');
    const from = String(raw.from ?? '');
    switch (op) {
      case 'add':
        doc = add(doc, path, raw.value ?? null);
        break;
      case 'remove':
        doc = remove(doc, path);
        break;
      case 'replace':
        getAt(doc, path);
        doc = remove(doc, path);
        doc = add(doc, path, raw.value ?? null);
        break;
      case 'move': {
        const v = getAt(doc, from);
        doc = remove(doc, from);
        doc = add(doc, path, v);
        break;
      }
      case 'copy':
        doc = add(doc, path, getAt(doc, from));
        break;
      case 'test':
        if (!jsonEqual(getAt(doc, path), raw.value ?? null)) throw failed(`testing value ${path} failed: test failed`);
        break;
      default:
        throw badRequest(`Unexpected kind: ${op}`);
    }
  }
  return doc;
}

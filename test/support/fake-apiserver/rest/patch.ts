import { jsonPatch } from '../patch-json.js';
import { mergePatch } from '../patch-merge.js';
import { strategicMergePatch } from '../patch-strategic.js';
import { badRequest, unsupportedPatch } from '../status.js';
import { isObject, type Json, type JsonObject, type KObject } from '../types.js';
import { parseBody, type Reply, type RestContext } from './context.js';
import { commitUpdate, currentObject } from './update.js';

const PATCH_TYPES = [
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/json-patch+json',
];

export function patchObject(ctx: RestContext): Reply {
  const type = ctx.contentType.split(';')[0].trim();
  if (!PATCH_TYPES.includes(type)) throw unsupportedPatch();
  const current = currentObject(ctx);
  const patch = parseBody(ctx);
  if (patch === null) throw badRequest('the body of the request was empty');
  const doc = current as unknown as JsonObject;
  let patched: Json;
  switch (type) {
    case 'application/merge-patch+json':
      patched = mergePatch(doc, patch);
      break;
    case 'application/strategic-merge-patch+json':
      patched = strategicMergePatch(ctx.req.rt.storageKey, doc, patch);
      break;
    case 'application/json-patch+json':
      patched = jsonPatch(doc, patch);
      break;
    default:
      throw unsupportedPatch();
  }
  if (!isObject(patched) || !isObject(patched.metadata)) throw badRequest('the patched object has no metadata');
  return commitUpdate(ctx, patched as KObject, current);
}

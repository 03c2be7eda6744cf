import { admitNodeRequest } from '../node-restriction.js';
import { badRequest, conflict, MODIFIED_CONFLICT, notFound } from '../status.js';
import { isCsr, validateCsrUpdate } from '../certificates/csr-strategy.js';
import { prepareCoreForUpdate } from '../core-objects/core-strategy.js';
import { prepareForUpdate } from '../strategy.js';
import { jsonEqual, meta, str, type JsonObject, type KObject } from '../types.js';
import { validateMetaUpdate, validateObject } from '../validation.js';
import { validateRuntimeClassUpdate } from '../runtime-class.js';
import type { Reply, RestContext } from './context.js';
import { bodyObject } from './create.js';

export function currentObject(ctx: RestContext): KObject {
  const { rt, namespace, name } = ctx.req;
  const o = ctx.store.get(rt.storageKey, namespace, name);
  if (!o) throw notFound(rt, name);
  return o;
}

/**
 * The common tail of PUT and PATCH: system fields carried over, status/spec split by subresource,
 * validation, admission, then a write only if something changed (no-op writes keep the resourceVersion).
 */
export function commitUpdate(ctx: RestContext, proposed: KObject, current: KObject): Reply {
  const { rt, subresource, namespace, name } = ctx.req;
  const rv = str(proposed.metadata.resourceVersion);
  if (rv && rv !== meta(current).resourceVersion) throw conflict(rt, name, MODIFIED_CONFLICT);
  const metaErr = validateMetaUpdate(rt, proposed, current);
  if (metaErr) throw metaErr;
  const next = prepareForUpdate(rt, proposed, current, subresource);
  next.metadata.resourceVersion = current.metadata.resourceVersion;
  validateObject(rt, next, [
    ...prepareCoreForUpdate(rt, next, current),
    ...validateRuntimeClassUpdate(rt, next, current),
  ]);
  const csrErr = isCsr(rt) ? validateCsrUpdate(rt, next, current, subresource) : undefined;
  if (csrErr) throw csrErr;
  const denied = admitNodeRequest(
    { user: ctx.user, op: 'UPDATE', rt, subresource, namespace, name, object: next, oldObject: current },
    ctx.store,
  );
  if (denied) throw denied;
  if (jsonEqual(next as unknown as JsonObject, current as unknown as JsonObject))
    return { status: 200, body: current as unknown as JsonObject };
  const stored = ctx.store.put(rt.storageKey, next, 'MODIFIED');
  return { status: 200, body: stored as unknown as JsonObject };
}

export function updateObject(ctx: RestContext): Reply {
  const { rt, name } = ctx.req;
  const proposed = bodyObject(ctx);
  const bodyName = str(proposed.metadata.name);
  if (bodyName !== name)
    throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  const current = currentObject(ctx);
  const uid = str(proposed.metadata.uid);
  if (uid && uid !== meta(current).uid)
    throw conflict(
      rt,
      name,
      `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${meta(current).uid}`,
    );
  return commitUpdate(ctx, proposed, current);
}

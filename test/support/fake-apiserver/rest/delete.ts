import { deleteFromStore } from '../deletion.js';
import { admitNodeRequest } from '../node-restriction.js';
import { conflict, successStatus } from '../status.js';
import { isObject, meta, num, obj, str, type JsonObject, type KObject } from '../types.js';
import { parseBody, type Reply, type RestContext } from './context.js';
import { selectedObjects } from './read.js';
import { currentObject } from './update.js';

interface DeleteOptions {
  gracePeriodSeconds?: number;
  uid?: string;
  resourceVersion?: string;
}

function deleteOptions(ctx: RestContext): DeleteOptions {
  const body = parseBody(ctx);
  const b = isObject(body) ? body : {};
  const pre = obj(b.preconditions);
  const q = ctx.req.query.get('gracePeriodSeconds');
  const opts: DeleteOptions = {};
  const grace = num(b.gracePeriodSeconds) ?? (q !== null ? Number(q) : undefined);
  if (grace !== undefined && !Number.isNaN(grace)) opts.gracePeriodSeconds = grace;
  if (str(pre.uid)) opts.uid = str(pre.uid);
  if (str(pre.resourceVersion)) opts.resourceVersion = str(pre.resourceVersion);
  return opts;
}

/** Preconditions, admission, then the registry's deletion; pods answer with the object, others a Status. */
function deleteOne(ctx: RestContext, current: KObject, opts: DeleteOptions): Reply {
  const { rt } = ctx.req;
  const m = meta(current);
  if (opts.uid && opts.uid !== m.uid)
    throw conflict(rt, m.name, `Precondition failed: UID in precondition: ${opts.uid}, UID in object meta: ${m.uid}`);
  if (opts.resourceVersion && opts.resourceVersion !== m.resourceVersion)
    throw conflict(
      rt,
      m.name,
      `Precondition failed: ResourceVersion in precondition: ${opts.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion}`,
    );
  const denied = admitNodeRequest(
    { user: ctx.user, op: 'DELETE', rt, subresource: '', namespace: m.namespace, name: m.name, oldObject: current },
    ctx.store,
  );
  if (denied) throw denied;
  const result = deleteFromStore(ctx.store, rt, current, opts.gracePeriodSeconds);
  const returnsObject = rt.resource === 'pods' && rt.group === '';
  return { status: 200, body: returnsObject ? (result as unknown as JsonObject) : successStatus(rt, m.name, m.uid) };
}

export function deleteObject(ctx: RestContext): Reply {
  const { rt, namespace, name, subresource } = ctx.req;
  if (!ctx.store.get(rt.storageKey, namespace, name)) {
    // Mutating admission runs before the storage lookup, so a node hears the plugin's NotFound.
    const denied = admitNodeRequest({ user: ctx.user, op: 'DELETE', rt, subresource, namespace, name }, ctx.store);
    if (denied) throw denied;
  }
  return deleteOne(ctx, currentObject(ctx), deleteOptions(ctx));
}

export function deleteCollection(ctx: RestContext): Reply {
  const opts = deleteOptions(ctx);
  const { rt } = ctx.req;
  const items: JsonObject[] = [];
  for (const o of selectedObjects(ctx)) {
    const r = deleteOne(ctx, o, opts);
    if (rt.resource === 'pods') items.push(r.body as JsonObject);
  }
  return {
    status: 200,
    body: {
      kind: `${rt.kind}List`,
      apiVersion: rt.group ? `${rt.group}/v1` : 'v1',
      metadata: { resourceVersion: String(ctx.store.currentRv) },
      items,
    },
  };
}

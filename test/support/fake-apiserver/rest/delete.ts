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

function secondsFromNow(s: number): string {
  return new Date(Date.now() + s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
}

/**
 * Pod deletion as the pod registry does it: a pod bound to a node (and not yet terminal) gets a
 * deletionTimestamp and stays until someone deletes it with grace 0; a later delete may only shorten
 * the grace period. Everything else goes at once.
 */
function deleteOne(ctx: RestContext, current: KObject, opts: DeleteOptions): Reply {
  const { rt } = ctx.req;
  const m = meta(current);
  if (opts.uid && opts.uid !== m.uid)
    throw conflict(rt, m.name, `Precondition failed: UID in precondition: ${opts.uid}, UID in object meta: ${m.uid}`);
  if (opts.resourceVersion && opts.resourceVersion !== m.resourceVersion)
    throw conflict(rt, m.name, `Precondition failed: ResourceVersion in precondition: ${opts.resourceVersion}, ResourceVersion in object meta: ${m.resourceVersion}`);
  const denied = admitNodeRequest({ user: ctx.user, op: 'DELETE', rt, subresource: '', namespace: m.namespace, name: m.name, oldObject: current }, ctx.store);
  if (denied) throw denied;

  const returnsObject = rt.resource === 'pods' && rt.group === '';
  const done = (o: KObject): Reply => ({ status: 200, body: returnsObject ? (o as unknown as JsonObject) : successStatus(rt, m.name, m.uid) });

  if (returnsObject) {
    const spec = obj(current.spec);
    const phase = str(obj(current.status).phase);
    let grace = opts.gracePeriodSeconds ?? num(spec.terminationGracePeriodSeconds) ?? 30;
    if (!str(spec.nodeName) || phase === 'Succeeded' || phase === 'Failed') grace = 0;
    if (grace < 0) grace = 1;
    const pending = num(current.metadata.deletionGracePeriodSeconds);
    if (current.metadata.deletionTimestamp && pending !== undefined && grace >= pending) return done(current);
    if (grace > 0) {
      const next = structuredClone(current);
      next.metadata.deletionTimestamp = secondsFromNow(grace);
      next.metadata.deletionGracePeriodSeconds = grace;
      return done(ctx.store.put(rt.storageKey, next, 'MODIFIED'));
    }
  }
  if (rt.resource === 'namespaces') for (const key of ctx.store.keys()) dropNamespaced(ctx, key, m.name);
  const gone = ctx.store.remove(rt.storageKey, m.namespace, m.name) ?? current;
  return done(gone);
}

/** No namespace controller here: deleting a namespace takes its contents with it at once. */
function dropNamespaced(ctx: RestContext, key: string, namespace: string): void {
  const [storageKey, ns, name] = key.split('/');
  if (ns === namespace) ctx.store.remove(storageKey, ns, name);
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
  return { status: 200, body: { kind: `${rt.kind}List`, apiVersion: rt.group ? `${rt.group}/v1` : 'v1', metadata: { resourceVersion: String(ctx.store.currentRv) }, items } };
}

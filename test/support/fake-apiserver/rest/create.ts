import { randomInt } from 'node:crypto';
import { admitNodeRequest } from '../node-restriction.js';
import { apiVersionOf } from '../resources.js';
import { alreadyExists, ApiError, badRequest } from '../status.js';
import { isCsr, prepareCsrForCreate } from '../certificates/csr-strategy.js';
import { prepareCoreForCreate } from '../core-objects/core-strategy.js';
import { admitServiceAccount } from '../core-objects/service-account-admission.js';
import { prepareForCreate } from '../strategy.js';
import { admitRuntimeClass } from '../runtime-class.js';
import { isObject, str, type KObject } from '../types.js';
import { validateObject } from '../validation.js';
import { parseBody, type Reply, type RestContext } from './context.js';

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

function generateName(prefix: string): string {
  let s = prefix;
  for (let i = 0; i < 5; i++) s += NAME_CHARS[randomInt(NAME_CHARS.length)];
  return s;
}

/** Reads the body of a create/update as an object of this resource, checking kind and namespace. */
export function bodyObject(ctx: RestContext): KObject {
  const body = parseBody(ctx);
  if (!isObject(body)) throw badRequest("Object 'Kind' is missing in the request body");
  const { rt, namespace } = ctx.req;
  const expected = apiVersionOf(rt);
  if (body.apiVersion !== undefined && body.apiVersion !== expected)
    throw badRequest(
      `the API version in the data (${str(body.apiVersion)}) does not match the expected API version (${expected})`,
    );
  if (body.kind !== undefined && body.kind !== rt.kind)
    throw badRequest(`the object provided is unrecognized (must be of type ${rt.kind})`);
  const metadata = isObject(body.metadata) ? body.metadata : {};
  const o = { ...body, metadata } as KObject;
  if (rt.namespaced) {
    const ns = str(metadata.namespace);
    if (ns && ns !== namespace)
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    metadata.namespace = namespace;
  }
  return o;
}

export function requireNamespace(ctx: RestContext): void {
  const { rt, namespace } = ctx.req;
  if (!rt.namespaced) return;
  if (!ctx.store.get('namespaces', '', namespace))
    throw new ApiError(404, 'NotFound', `namespaces "${namespace}" not found`, { name: namespace, kind: 'namespaces' });
}

export function createObject(ctx: RestContext): Reply {
  const { rt } = ctx.req;
  const o = bodyObject(ctx);
  if (!str(o.metadata.name) && str(o.metadata.generateName))
    o.metadata.name = generateName(str(o.metadata.generateName));
  requireNamespace(ctx);
  const name = str(o.metadata.name);
  const denied = admitNodeRequest(
    { user: ctx.user, op: 'CREATE', rt, subresource: '', namespace: ctx.req.namespace, name, object: o },
    ctx.store,
  );
  if (denied) throw denied;
  const prepared = prepareForCreate(rt, o);
  if (ctx.serviceAccountAdmission && rt.group === '' && rt.resource === 'pods') {
    const refused = admitServiceAccount(prepared, ctx.store);
    if (refused) throw refused;
  }
  if (rt.group === '' && rt.resource === 'pods') {
    const refused = admitRuntimeClass(prepared, ctx.store);
    if (refused) throw refused;
  }
  if (isCsr(rt)) prepareCsrForCreate(prepared, ctx.user);
  const causes = prepareCoreForCreate(rt, prepared, ctx.store);
  validateObject(rt, prepared, causes);
  // etcd3's Create refuses it with a plain error, which the server turns into a reason-less 500.
  if (str(o.metadata.resourceVersion))
    throw new ApiError(500, '', 'resourceVersion should not be set on objects to be created');
  if (ctx.store.get(rt.storageKey, ctx.req.namespace, name)) throw alreadyExists(rt, name);
  const stored = ctx.store.put(rt.storageKey, prepared, 'ADDED');
  return { status: 201, body: stored as unknown as Reply['body'] };
}

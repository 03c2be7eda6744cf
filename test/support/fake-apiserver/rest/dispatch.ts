import { badRequest, methodNotAllowed, pathNotFound } from '../status.js';
import { admitNodeRequest } from '../node-restriction.js';
import { isObject, type KObject } from '../types.js';
import { parseBody, type Reply, type RestContext } from './context.js';
import { createObject } from './create.js';
import { deleteCollection, deleteObject } from './delete.js';
import { patchObject } from './patch.js';
import { getObject, listObjects } from './read.js';
import { updateObject } from './update.js';
import { serveWatch } from './watch.js';

/** `end('timeout')` ends a watch as its timeoutSeconds would (a bookmark first, when asked for); `end()` just ends it. */
export type WatchRegistry = (end: (how?: 'timeout') => void) => () => void;

/** Routes a resource request to its verb; undefined means the response is a watch stream. */
export function dispatchResource(ctx: RestContext, watches: WatchRegistry): Reply | undefined {
  const { rt, verb, subresource } = ctx.req;
  if (subresource && !rt.subresources.includes(subresource)) throw pathNotFound();
  // Loud rather than wrong: a dry run here would persist.
  if (ctx.req.query.has('dryRun')) throw badRequest('dryRun is not implemented by the fake API server');
  if (subresource === 'token' && rt.resource === 'serviceaccounts') {
    if (verb !== 'create' || !ctx.tokenIssuer) throw methodNotAllowed();
    const denied = admitNodeRequest(
      {
        user: ctx.user,
        op: 'CREATE',
        rt,
        subresource,
        namespace: ctx.req.namespace,
        name: ctx.req.name,
        object: tokenRequestBody(ctx),
      },
      ctx.store,
    );
    if (denied) throw denied;
    return ctx.tokenIssuer.create(ctx);
  }
  if (subresource && !['get', 'update', 'patch'].includes(verb)) throw methodNotAllowed();
  switch (verb) {
    case 'get':
      return getObject(ctx);
    case 'list':
      return listObjects(ctx);
    case 'watch':
      serveWatch(ctx, watches);
      return undefined;
    case 'create':
      return createObject(ctx);
    case 'update':
      return updateObject(ctx);
    case 'patch':
      return patchObject(ctx);
    case 'delete':
      return deleteObject(ctx);
    case 'deletecollection':
      return deleteCollection(ctx);
  }
}

/** The TokenRequest as admission sees it (the registry parses it again). */
function tokenRequestBody(ctx: RestContext): KObject {
  const body = parseBody(ctx);
  return isObject(body)
    ? ({ ...body, metadata: isObject(body.metadata) ? body.metadata : {} } as KObject)
    : { metadata: {} };
}

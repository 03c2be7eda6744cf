import { parseFieldSelector, parseLabelSelector } from '../selectors.js';
import { badRequest, notFound } from '../status.js';
import type { KObject } from '../types.js';
import type { Reply, RestContext } from './context.js';
import { renderList, renderOne } from './output.js';

export function getObject(ctx: RestContext): Reply {
  const { rt, namespace, name } = ctx.req;
  const o = ctx.store.get(rt.storageKey, namespace, name);
  if (!o) throw notFound(rt, name);
  return { status: 200, body: renderOne(rt, o, ctx.accept, ctx.req.query) };
}

export function selectedObjects(ctx: RestContext): KObject[] {
  const { rt, namespace, query } = ctx.req;
  const labels = parseLabelSelector(query.get('labelSelector'));
  const fields = parseFieldSelector(query.get('fieldSelector'), rt.storageKey);
  return ctx.store
    .list(rt.storageKey, rt.namespaced ? namespace || undefined : undefined)
    .filter((o) => labels(o) && fields(o));
}

interface ContinueToken {
  rv: string;
  offset: number;
}

export function listObjects(ctx: RestContext): Reply {
  const { rt, query } = ctx.req;
  let items = selectedObjects(ctx);
  let rv = String(ctx.store.currentRv);
  let offset = 0;
  const cont = query.get('continue');
  if (cont) {
    try {
      const t = JSON.parse(Buffer.from(cont, 'base64').toString('utf8')) as ContinueToken;
      rv = t.rv;
      offset = t.offset;
    } catch {
      throw badRequest('continue key is not valid: illegal base64 data');
    }
  }
  const limit = Number(query.get('limit') ?? '0');
  let next = '';
  if (limit > 0) {
    const end = offset + limit;
    if (end < items.length)
      next = Buffer.from(JSON.stringify({ rv, offset: end } satisfies ContinueToken)).toString('base64');
    items = items.slice(offset, end);
  } else items = items.slice(offset);
  return { status: 200, body: renderList(rt, items, rv, ctx.accept, query, next) };
}

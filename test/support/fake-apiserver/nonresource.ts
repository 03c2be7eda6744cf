import {
  aggregatedDiscovery,
  AGGREGATED_V2,
  apiGroup,
  apiGroupList,
  apiVersions,
  resourceList,
  SERVER_VERSION,
  wantsAggregated,
} from './discovery.js';
import { openApiDocument, openApiGroupOf, openApiIndex } from './openapi.js';
import { GROUPS, groupVersion } from './resources.js';
import { pathNotFound } from './status.js';
import type { Json } from './types.js';

export interface NonResourceReply {
  status: number;
  body: Json | string;
  contentType: string;
}

/** Discovery, /version and health endpoints. */
export function serveNonResource(path: string, accept: string, serverAddress: string): NonResourceReply {
  const json = (body: Json, contentType = 'application/json'): NonResourceReply => ({ status: 200, body, contentType });
  const p = path.replace(/\/+$/, '') || '/';
  if (p === '/version') return json(SERVER_VERSION);
  if (/^\/(healthz|livez|readyz)(\/.*)?$/.test(p))
    return { status: 200, body: 'ok', contentType: 'text/plain; charset=utf-8' };
  if (p === '/api')
    return wantsAggregated(accept) ? json(aggregatedDiscovery(true), AGGREGATED_V2) : json(apiVersions(serverAddress));
  if (p === '/apis')
    return wantsAggregated(accept) ? json(aggregatedDiscovery(false), AGGREGATED_V2) : json(apiGroupList());
  if (p === '/api/v1') return json(resourceList(''));
  if (p === '/openapi/v3') return json(openApiIndex());
  const openApiGroup = p.startsWith('/openapi/v3/') ? openApiGroupOf(p) : undefined;
  if (openApiGroup !== undefined) return json(openApiDocument(openApiGroup));
  const m = /^\/apis\/([^/]+)(?:\/(v1|v1beta1))?$/.exec(p);
  if (m && GROUPS.includes(m[1]) && (!m[2] || m[2] === groupVersion(m[1])))
    return m[2] ? json(resourceList(m[1])) : json({ kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(m[1]) });
  throw pathNotFound();
}

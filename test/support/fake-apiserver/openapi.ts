import { createHash } from 'node:crypto';
import { GROUPS, RESOURCES, type ResourceType } from './resources.js';
import type { JsonObject } from './types.js';

/**
 * Just enough OpenAPI v3 for kubectl's "does the server validate fields?" probe (QueryParamVerifierV3):
 * per group-version, the paths with their x-kubernetes-group-version-kind and a fieldValidation query
 * parameter. No schemas: kubectl then leaves validation to the server and computes apply patches from
 * its built-in types. The fake does not itself enforce fieldValidation=Strict.
 */
function gvPath(group: string): string {
  return group ? `apis/${group}/v1` : 'api/v1';
}

const FIELD_VALIDATION = { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } };

function op(rt: ResourceType, action: string, withFieldValidation: boolean): JsonObject {
  return {
    operationId: `${action}${rt.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: rt.group, version: rt.version, kind: rt.kind },
    parameters: withFieldValidation ? [FIELD_VALIDATION] : [],
    responses: { '200': { description: 'OK' } },
  };
}

function paths(group: string): JsonObject {
  const out: JsonObject = {};
  for (const rt of RESOURCES.filter((r) => r.group === group)) {
    const base = `/${gvPath(group)}${rt.namespaced ? '/namespaces/{namespace}' : ''}/${rt.resource}`;
    out[base] = { get: op(rt, 'list', false), post: op(rt, 'post', true) };
    out[`${base}/{name}`] = {
      get: op(rt, 'get', false),
      put: op(rt, 'put', true),
      patch: op(rt, 'patch', true),
      delete: op(rt, 'delete', false),
    };
    for (const s of rt.subresources)
      out[`${base}/{name}/${s}`] = {
        get: op(rt, 'get', false),
        put: op(rt, 'put', true),
        patch: op(rt, 'patch', true),
      };
  }
  return out;
}

export function openApiDocument(group: string): JsonObject {
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: 'v1.32.4' },
    paths: paths(group),
    components: { schemas: {} },
  };
}

export function openApiIndex(): JsonObject {
  const out: JsonObject = {};
  for (const g of ['', ...GROUPS]) {
    const hash = createHash('sha512')
      .update(JSON.stringify(openApiDocument(g)))
      .digest('hex')
      .slice(0, 128)
      .toUpperCase();
    out[gvPath(g)] = { serverRelativeURL: `/openapi/v3/${gvPath(g)}?hash=${hash}` };
  }
  return { paths: out };
}

/** The group for an /openapi/v3/<gv> path, or undefined when not served. */
export function openApiGroupOf(path: string): string | undefined {
  const rest = path.replace(/^\/openapi\/v3\//, '');
  for (const g of ['', ...GROUPS]) if (rest === gvPath(g)) return g;
  return undefined;
}

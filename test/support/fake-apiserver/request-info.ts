import { findResource, type ResourceType } from './resources.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRequest {
  kind: 'resource';
  verb: Verb;
  rt: ResourceType;
  namespace: string;
  name: string;
  subresource: string;
  query: URLSearchParams;
  /** For <resource>/<name>/proxy/<path>: the path on the far side, its trailing slash kept. */
  proxyPath?: string;
}

export interface NonResourceRequest {
  kind: 'nonresource';
  verb: string;
  path: string;
  query: URLSearchParams;
}

export type RequestInfo = ResourceRequest | NonResourceRequest | { kind: 'unknown-resource'; path: string };

/** Splits an API path into verb, resource, namespace, name and subresource (cf. apiserver RequestInfoFactory). */
export function parseRequest(method: string, rawUrl: string): RequestInfo {
  const url = new URL(rawUrl, 'https://fake');
  const query = url.searchParams;
  const path = url.pathname;
  const parts = path.split('/').filter(Boolean);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 2) {
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return { kind: 'nonresource', verb: method.toLowerCase(), path, query };
  }
  if (rest.length === 0) return { kind: 'nonresource', verb: method.toLowerCase(), path, query };

  let namespace = '';
  // namespaces/{ns}/{resource}/... — but namespaces/{name}[/status] is the namespace object itself.
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const rt = findResource(group, version, rest[0]);
  if (!rt) return { kind: 'unknown-resource', path };
  const name = rest[1] ?? '';
  let subresource = rest.slice(2).join('/');
  // The proxy subresource: what follows it is a path on the node, not more of the subresource.
  let proxyPath: string | undefined;
  if (rest[2] === 'proxy') {
    subresource = 'proxy';
    const marker = `/${name}/proxy`;
    proxyPath = path.slice(path.indexOf(marker) + marker.length) || '/';
  }

  const isWatch = query.get('watch') === '1' || query.get('watch') === 'true';
  let verb: Verb;
  switch (method) {
    case 'GET':
    case 'HEAD':
      verb = name ? 'get' : isWatch ? 'watch' : 'list';
      if (name && isWatch) verb = 'watch';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name ? 'delete' : 'deletecollection';
      break;
    default:
      return { kind: 'nonresource', verb: method.toLowerCase(), path, query };
  }
  return {
    kind: 'resource',
    verb,
    rt,
    namespace: rt.namespaced ? namespace : '',
    name,
    subresource,
    query,
    ...(proxyPath !== undefined ? { proxyPath } : {}),
  };
}

import { GROUPS, groupVersion, RESOURCES, type ResourceType } from './resources.js';
import type { JsonObject } from './types.js';

export const SERVER_VERSION: JsonObject = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.4',
  gitCommit: '59526cd4867447956156ae3a602fcbac10a2c335',
  gitTreeState: 'clean',
  buildDate: '2025-04-22T16:00:00Z',
  goVersion: 'go1.23.6',
  compiler: 'gc',
  platform: 'linux/amd64',
};

export const AGGREGATED_V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

const SUB_VERBS = ['get', 'patch', 'update'];
const PROXY_SUB_VERBS: Record<string, string[]> = {
  log: ['get'],
  exec: ['create', 'get'],
  attach: ['create', 'get'],
  portforward: ['create', 'get'],
  token: ['create'],
  proxy: ['create', 'delete', 'get', 'patch', 'update'],
};
const subVerbs = (s: string): string[] => PROXY_SUB_VERBS[s] ?? SUB_VERBS;

function legacyResources(group: string): JsonObject[] {
  const out: JsonObject[] = [];
  for (const r of RESOURCES.filter((x) => x.group === group)) {
    const entry: JsonObject = {
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
    };
    if (r.shortNames.length) entry.shortNames = r.shortNames;
    if (r.resource === 'pods') entry.categories = ['all'];
    out.push(entry);
    for (const s of r.subresources)
      out.push({
        name: `${r.resource}/${s}`,
        singularName: '',
        namespaced: r.namespaced,
        kind: r.kind,
        verbs: subVerbs(s),
      });
  }
  return out;
}

/** /api: the legacy group's versions. */
export function apiVersions(serverAddress: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** /apis: the named groups. */
export function apiGroupList(): JsonObject {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: GROUPS.map(apiGroup) };
}

export function apiGroup(name: string): JsonObject {
  const v = groupVersion(name);
  const gv = { groupVersion: `${name}/${v}`, version: v };
  return { name, versions: [gv], preferredVersion: gv };
}

export function resourceList(group: string): JsonObject {
  const gv = group ? `${group}/${groupVersion(group)}` : 'v1';
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: gv, resources: legacyResources(group) };
}

function aggregatedResource(r: ResourceType): JsonObject {
  const kind = { group: r.group, version: r.version, kind: r.kind };
  const out: JsonObject = {
    resource: r.resource,
    responseKind: kind,
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: r.verbs,
  };
  if (r.shortNames.length) out.shortNames = r.shortNames;
  if (r.resource === 'pods') out.categories = ['all'];
  if (r.subresources.length)
    out.subresources = r.subresources.map((s) => ({ subresource: s, responseKind: kind, verbs: subVerbs(s) }));
  return out;
}

/** The apidiscovery.k8s.io/v2 document for /api (legacy=true) or /apis. */
export function aggregatedDiscovery(legacy: boolean): JsonObject {
  const groups = legacy ? [''] : [...GROUPS];
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g, creationTimestamp: null },
      versions: [
        {
          version: groupVersion(g),
          resources: RESOURCES.filter((r) => r.group === g).map(aggregatedResource),
          freshness: 'Current',
        },
      ],
    })),
  };
}

/** Whether the client asked for aggregated discovery v2 (kubectl 1.32 lists it first in Accept). */
export function wantsAggregated(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept
    .split(',')
    .map((p) => p.replace(/\s+/g, ''))
    .some(
      (p) =>
        p.startsWith('application/json') &&
        p.includes('g=apidiscovery.k8s.io') &&
        p.includes('v=v2;') &&
        p.includes('as=APIGroupDiscoveryList'),
    );
}

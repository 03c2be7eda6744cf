import { badRequest } from './status.js';
import { meta, obj, str, type KObject } from './types.js';

export type Selector = (o: KObject) => boolean;

interface Requirement {
  key: string;
  op: 'eq' | 'neq' | 'in' | 'notin' | 'exists' | '!exists';
  values: string[];
}

/** Parses a label selector string (`a=b,c!=d,e in (f,g),!h`). */
export function parseLabelSelector(text: string | null): Selector {
  if (!text) return () => true;
  const reqs = splitTopLevel(text).map(parseRequirement);
  return (o) => {
    const labels = meta(o).labels;
    return reqs.every((r) => matches(r, labels[r.key]));
  };
}

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

function parseRequirement(part: string): Requirement {
  let m = /^([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
  if (m) return { key: m[1], op: m[2] as 'in' | 'notin', values: m[3].split(',').map((v) => v.trim()) };
  m = /^([^\s!=]+)\s*(==|=|!=)\s*(\S*)$/.exec(part);
  if (m) return { key: m[1], op: m[2] === '!=' ? 'neq' : 'eq', values: [m[3]] };
  m = /^!\s*([^\s!=]+)$/.exec(part);
  if (m) return { key: m[1], op: '!exists', values: [] };
  m = /^([^\s!=()]+)$/.exec(part);
  if (m) return { key: m[1], op: 'exists', values: [] };
  throw badRequest(`unable to parse requirement: ${part}`);
}

function matches(r: Requirement, v: string | undefined): boolean {
  switch (r.op) {
    case 'eq':
      return v === r.values[0];
    case 'neq':
      return v !== r.values[0];
    case 'in':
      return v !== undefined && r.values.includes(v);
    case 'notin':
      return v === undefined || !r.values.includes(v);
    case 'exists':
      return v !== undefined;
    case '!exists':
      return v === undefined;
  }
}

type FieldGetter = (o: KObject) => string;

const COMMON_FIELDS: Record<string, FieldGetter> = {
  'metadata.name': (o) => meta(o).name,
  'metadata.namespace': (o) => meta(o).namespace,
};

/** The field labels each resource supports, as its registry's GetAttrs/field label conversion allows. */
const FIELDS_BY_RESOURCE: Record<string, Record<string, FieldGetter>> = {
  pods: {
    'spec.nodeName': (o) => str(obj(o.spec).nodeName),
    'spec.restartPolicy': (o) => str(obj(o.spec).restartPolicy),
    'spec.schedulerName': (o) => str(obj(o.spec).schedulerName),
    'spec.serviceAccountName': (o) => str(obj(o.spec).serviceAccountName),
    'spec.hostNetwork': (o) => String(obj(o.spec).hostNetwork === true),
    'status.phase': (o) => str(obj(o.status).phase),
    'status.podIP': (o) => str(obj(o.status).podIP),
    'status.nominatedNodeName': (o) => str(obj(o.status).nominatedNodeName),
  },
  secrets: { type: (o) => str(o.type) },
  nodes: { 'spec.unschedulable': (o) => String(obj(o.spec).unschedulable === true) },
  namespaces: { 'status.phase': (o) => str(obj(o.status).phase) },
  'certificatesigningrequests.certificates.k8s.io': { 'spec.signerName': (o) => str(obj(o.spec).signerName) },
  events: {
    'involvedObject.kind': (o) => str(obj(o.involvedObject).kind),
    'involvedObject.name': (o) => str(obj(o.involvedObject).name),
    'involvedObject.namespace': (o) => str(obj(o.involvedObject).namespace),
    'involvedObject.uid': (o) => str(obj(o.involvedObject).uid),
    reason: (o) => str(o.reason),
    type: (o) => str(o.type),
  },
};

/** Parses a field selector (`a=b,c!=d`) for one resource; unknown fields are a 400 like the real server. */
export function parseFieldSelector(text: string | null, storageKey: string): Selector {
  if (!text) return () => true;
  const fields = { ...COMMON_FIELDS, ...(FIELDS_BY_RESOURCE[storageKey] ?? {}) };
  const reqs = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^([^!=]+?)\s*(==|=|!=)\s*(.*)$/.exec(part);
      if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
      const getter = fields[m[1]];
      if (!getter) throw badRequest(`field label not supported: ${m[1]}`);
      return { getter, neq: m[2] === '!=', value: m[3] };
    });
  return (o) => reqs.every((r) => (r.getter(o) === r.value) !== r.neq);
}

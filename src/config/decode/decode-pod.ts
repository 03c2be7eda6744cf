// A parsed manifest -> a v1 Pod, decoded the way the API machinery decodes JSON into Go types:
// - `null` means unset, for any field;
// - an optional field that is not a Go pointer and holds its zero value (`false`, `0`, `""`, `[]`,
//   `{}`) is unset, so `hostPID: false`, `resources: {}` or `status: {}` change nothing, not even the
//   pod's UID; a pointer keeps its value (`privileged: false`, `emptyDir: {}` mean something);
// - a field the API declares required that is missing is its Go zero value (a pointer: nil), as Go
//   decodes it: validation then says what the API server says of that zero;
// - fields the Pod type does not have are dropped, each named in a warning (as the API server drops
//   them);
// - a value of the wrong type is an error naming the field path;
// - what the API server sets itself on create (status, creationTimestamp, resourceVersion, ...) is
//   dropped: `kubectl get -o yaml` output and kubeadm's `creationTimestamp: null` work as manifests.
// The decoded pod is bounded: at most MAX_NODES values and MAX_DECODED_BYTES as JSON, counted while
// it is built (aliases in the parsed object may share structure; the copy made here cannot).
import type { Pod } from 'kubernetes-types/core/v1';
import podSchemaJson from '../generated/pod-schema.json';
import { formatPath, type PathPart } from '../field-path';
import { LimitError, MAX_DECODED_BYTES, MAX_NODES } from '../parse/limits';
import { GO_POINTER_FIELDS } from './go-pointer-fields';
import { Quantity } from '../../k8s/quantity.js';

interface SchemaNode {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly items?: SchemaNode;
  readonly required?: readonly string[];
}
interface SchemaRoot extends SchemaNode {
  readonly definitions: Readonly<Record<string, SchemaNode>>;
}

const schema = podSchemaJson as unknown as SchemaRoot;
const pointerFields = new Map(Object.entries(GO_POINTER_FIELDS).map(([type, fields]) => [type, new Set(fields)]));

/** Set by the API server on create (or only ever by it); a manifest's values are not used. */
const SERVER_SET_METADATA = [
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'resourceVersion',
  'generation',
  'selfLink',
  'managedFields',
];

export interface DecodeResult {
  /** Undefined when there were errors. */
  readonly pod?: Pod;
  readonly errors: string[];
  /** Unknown fields, dropped. */
  readonly warnings: string[];
}

const UNSET = Symbol('unset');
type Decoded = unknown | typeof UNSET;

interface Walk {
  readonly errors: string[];
  readonly warnings: string[];
  nodes: number;
  bytes: number;
}

/** A schema node with its $refs followed, and the name of the type it is (for the pointer table). */
function resolve(node: SchemaNode): { node: SchemaNode; type?: string } {
  let n = node;
  let type: string | undefined;
  for (let i = 0; n.$ref !== undefined && i < 10; i++) {
    type = n.$ref.replace('#/definitions/', '');
    n = schema.definitions[type] ?? {};
  }
  return { node: n, type };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function typesOf(node: SchemaNode): readonly string[] {
  if (node.type === undefined) return [];
  return typeof node.type === 'string' ? [node.type] : node.type;
}

function isZero(v: unknown): boolean {
  if (v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return isRecord(v) && Object.keys(v).length === 0;
}

function charge(w: Walk, bytes: number): void {
  w.nodes++;
  w.bytes += bytes;
  if (w.nodes > MAX_NODES) throw new LimitError(`the pod has more than ${MAX_NODES} values (the limit for a manifest)`);
  if (w.bytes > MAX_DECODED_BYTES)
    throw new LimitError(`the pod is larger than ${MAX_DECODED_BYTES / (1024 * 1024)} MiB (the limit for a manifest)`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return isRecord(v) ? 'an object' : 'a value of another kind';
  return `${typeof v === 'number' && !Number.isInteger(v) ? 'a fractional number' : `a ${typeof v}`}`;
}

function typeError(w: Walk, path: PathPart[], want: readonly string[], got: unknown): typeof UNSET {
  const shown = want.map((t) =>
    t === 'object' ? 'an object' : t === 'array' ? 'a list' : t === 'integer' ? 'an integer' : `a ${t}`,
  );
  w.errors.push(`${formatPath(path) || '(root)'}: must be ${shown.join(' or ')}, found ${describe(got)}`);
  return UNSET;
}

/** A Go zero value of a schema type, for a `null` list item or map value (Go decodes them so). */
function zeroOf(node: SchemaNode): unknown {
  const n = resolve(node).node;
  const t = typesOf(n)[0];
  if (t === 'string') return '';
  if (t === 'integer' || t === 'number') return 0;
  if (t === 'boolean') return false;
  if (t === 'array') return [];
  return {};
}

function decodeScalar(v: unknown, n: SchemaNode, path: PathPart[], w: Walk): Decoded {
  const types = typesOf(n);
  if (typeof v === 'string' && types.includes('string')) {
    charge(w, v.length + 2);
    return v;
  }
  if (typeof v === 'boolean' && types.includes('boolean')) {
    charge(w, 5);
    return v;
  }
  if (typeof v === 'number' && Number.isFinite(v)) {
    if (types.includes('integer') && Number.isInteger(v)) {
      charge(w, 8);
      return v;
    }
    // A Quantity written as a number (`cpu: 0.5`) is the same Quantity as the string.
    if (types.includes('number') && types.includes('string')) {
      charge(w, 8);
      return String(v);
    }
  }
  return typeError(w, path, types, v);
}

/**
 * A resource.Quantity must parse, as when the API machinery decodes it: the kubelet refuses such a
 * manifest, where a pod accepted with `memory: 12Q` would fail to start at every sync.
 */
function decodeQuantity(v: unknown, n: SchemaNode, path: PathPart[], w: Walk): Decoded {
  const s = decodeScalar(v, n, path, w);
  if (s === UNSET) return s;
  try {
    Quantity.parse(String(s));
    return s;
  } catch {
    const shown = String(s).length > 40 ? `${String(s).slice(0, 40)}…` : String(s);
    w.errors.push(
      `${formatPath(path)}: Invalid value: ${JSON.stringify(shown)}: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
    return UNSET;
  }
}

function decodeObject(v: unknown, n: SchemaNode, type: string | undefined, path: PathPart[], w: Walk): Decoded {
  if (!isRecord(v)) return typeError(w, path, ['object'], v);
  charge(w, 2);
  const out: Record<string, unknown> = {};
  const props = n.properties;
  // Free-form (no declared fields, e.g. FieldsV1): kept as it is, but paid for.
  if (!props && typeof n.additionalProperties !== 'object') return decodeFree(v, path, w);
  const pointers = type ? pointerFields.get(type) : undefined;
  const required = new Set(n.required ?? []);
  for (const key of Object.keys(v)) {
    const raw = v[key];
    const prop = props?.[key] ?? (typeof n.additionalProperties === 'object' ? n.additionalProperties : undefined);
    if (!prop) {
      w.warnings.push(`unknown field ${JSON.stringify(formatPath([...path, key]))}`);
      continue;
    }
    if (raw === null || raw === undefined) continue;
    const child = decodeNode(raw, prop, [...path, key], w);
    if (child === UNSET) continue;
    // Map values are kept whatever they are; fields follow Go's omitempty for value types.
    if (props?.[key] && !required.has(key) && !pointers?.has(key) && isZero(child)) continue;
    Object.defineProperty(out, key, { value: child, enumerable: true, writable: true, configurable: true });
  }
  // Go has no "missing": an absent field is its zero value, and the API server's rules judge that
  // value (an absent weight is `Invalid value: 0`, an absent name `Required value`). A pointer stays
  // nil (scaleIO's secretRef may be left out). A field that failed to decode is left out.
  for (const key of required) {
    if (out[key] !== undefined || pointers?.has(key) || !props?.[key]) continue;
    if (w.errors.some((e) => e.startsWith(`${formatPath([...path, key])}:`))) continue;
    Object.defineProperty(out, key, {
      value: zeroOf(props[key]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function decodeFree(v: unknown, path: PathPart[], w: Walk): unknown {
  if (Array.isArray(v)) return v.map((x, i) => decodeFree(x, [...path, i], w));
  if (isRecord(v)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(v)) {
      charge(w, key.length + 3);
      Object.defineProperty(out, key, {
        value: decodeFree(v[key], [...path, key], w),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  charge(w, typeof v === 'string' ? v.length + 2 : 8);
  return v;
}

function decodeNode(v: unknown, node: SchemaNode, path: PathPart[], w: Walk): Decoded {
  const { node: n, type } = resolve(node);
  const types = typesOf(n);
  if (types.includes('array')) {
    if (!Array.isArray(v)) return typeError(w, path, ['array'], v);
    charge(w, 2);
    const items = n.items ?? {};
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const item = v[i] === null || v[i] === undefined ? zeroOf(items) : decodeNode(v[i], items, [...path, i], w);
      if (item !== UNSET) out.push(item);
    }
    return out;
  }
  if (types.includes('object') || n.properties) {
    if (n.additionalProperties && typeof n.additionalProperties === 'object' && !n.properties && isRecord(v)) {
      // A map (labels, resources.limits, nodeSelector): a null value is the zero value.
      const valueNode = n.additionalProperties;
      charge(w, 2);
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v)) {
        charge(w, key.length + 3);
        const item =
          v[key] === null || v[key] === undefined
            ? zeroOf(valueNode)
            : decodeNode(v[key], valueNode, [...path, key], w);
        if (item !== UNSET)
          Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return decodeObject(v, n, type, path, w);
  }
  if (type === 'Quantity') return decodeQuantity(v, n, path, w);
  return decodeScalar(v, n, path, w);
}

/** Decodes a parsed manifest (already known to be `kind: Pod`, `apiVersion: v1`). */
export function decodePod(object: Record<string, unknown>): DecodeResult {
  const w: Walk = { errors: [], warnings: [], nodes: 0, bytes: 0 };
  const { status: _status, ...rest } = object;
  const meta = isRecord(rest.metadata) ? { ...rest.metadata } : rest.metadata;
  if (isRecord(meta)) for (const k of SERVER_SET_METADATA) delete meta[k];
  const decoded = decodeNode({ ...rest, metadata: meta }, schema, [], w);
  if (w.errors.length > 0 || decoded === UNSET) return { errors: w.errors, warnings: w.warnings };
  return { pod: decoded as Pod, errors: [], warnings: w.warnings };
}

// Structure and types of a decoded manifest against the v1 Pod JSON Schema generated at build time
// (build/gen-pod-schema.mjs). Wrong types are errors; unknown fields are warnings, as
// `kubectl --validate=warn` treats them, because a newer field this build does not know must not stop
// a control-plane pod.
//
// The validator is ajv "standalone" code generated at build time rather than compiled here: loading
// it takes ~14 ms, while importing ajv and compiling the schema at start-up took ~50 ms + ~210 ms on
// the build machine (measured in the same session; see the gen-pod-schema.mjs output).
import validatePod from './generated/pod-validator.mjs';
import podSchemaJson from './generated/pod-schema.json';
import { formatPath, pointerToPath, type PathPart } from './field-path';

interface SchemaNode {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly items?: SchemaNode;
}
interface SchemaRoot extends SchemaNode {
  readonly definitions: Readonly<Record<string, SchemaNode>>;
}

const podSchema = podSchemaJson as unknown as SchemaRoot;

export interface SchemaResult {
  readonly errors: string[];
  readonly warnings: string[];
}

function resolve(node: SchemaNode): SchemaNode {
  let n = node;
  for (let i = 0; n.$ref !== undefined && i < 10; i++) {
    const name = n.$ref.replace('#/definitions/', '');
    const def = podSchema.definitions[name];
    if (!def) return {};
    n = def;
  }
  return n;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every field the schema does not declare, as a field path; type errors are left to ajv. */
function unknownFields(value: unknown, node: SchemaNode, path: PathPart[], out: string[]): void {
  const n = resolve(node);
  if (Array.isArray(value)) {
    if (n.items) value.forEach((v, i) => unknownFields(v, n.items!, [...path, i], out));
    return;
  }
  if (!isRecord(value)) return;
  for (const [k, v] of Object.entries(value)) {
    const prop = n.properties?.[k];
    if (prop) unknownFields(v, prop, [...path, k], out);
    else if (typeof n.additionalProperties === 'object') unknownFields(v, n.additionalProperties, [...path, k], out);
    else if (n.properties) out.push(`unknown field ${JSON.stringify(formatPath([...path, k]))}`);
    // An object schema without declared properties (FieldsV1) is free-form.
  }
}

export function validateSchema(object: unknown): SchemaResult {
  const errors: string[] = [];
  if (!validatePod(object)) {
    const seen = new Set<string>();
    for (const e of validatePod.errors ?? []) {
      const base = pointerToPath(e.instancePath);
      let line: string;
      if (e.keyword === 'required') {
        const missing = String((e.params as { missingProperty?: unknown }).missingProperty);
        line = `${base === '' ? missing : `${base}.${missing}`}: Required value`;
      } else if (e.keyword === 'type') {
        const t = (e.params as { type?: unknown }).type;
        const types = Array.isArray(t) ? t.join(' or ') : String(t);
        line = `${base || '(root)'}: must be ${types}`;
      } else {
        line = `${base || '(root)'}: ${e.message ?? e.keyword}`;
      }
      if (!seen.has(line)) {
        seen.add(line);
        errors.push(line);
      }
    }
  }
  const warnings: string[] = [];
  unknownFields(object, podSchema, [], warnings);
  return { errors, warnings };
}

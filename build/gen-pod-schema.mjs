// Build step: a JSON Schema of the v1 Pod from the kubernetes-types declarations, into
// src/config/generated/ (gitignored). The manifest decoder (src/config/decode/decode-pod.ts) walks it
// to type-check fields, drop unknown ones and tell optional fields from required ones.
//
// kubernetes-types stops at v1.30: src/k8s/pod-api-additions.ts declares what the API added since.
// Each of its `<Type>Additions` interfaces adds its fields to `<Type>` here, and the new types they
// name become definitions of their own. A field the API removed since v1.30 is taken out (the API
// server drops it as unknown now).
//
// Post-processing fixes what the TypeScript declarations say differently from the API's JSON:
// - Quantity is declared `string`, but manifests write `cpu: 1` or `cpu: 0.5`: number or string.
// - IntOrString is declared `number | string`, kept as is, but the number part must be an integer.
// - every other `number` in core/v1 Pod is an int32 or int64 (the Pod has no float fields), so `integer`.
import { createGenerator } from 'ts-json-schema-generator';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = join(root, 'src/config/generated');

const t0 = performance.now();
const generator = createGenerator({
  path: join(root, 'node_modules/kubernetes-types/core/v1.d.ts'),
  tsconfig: join(root, 'tsconfig.json'),
  type: 'Pod',
  expose: 'export',
  topRef: true,
  jsDoc: 'none',
  skipTypeCheck: true,
  additionalProperties: true,
});
const raw = generator.createSchema('Pod');
const additions = createGenerator({
  path: join(root, 'src/k8s/pod-api-additions.ts'),
  tsconfig: join(root, 'tsconfig.json'),
  type: '*',
  expose: 'export',
  topRef: true,
  jsDoc: 'none',
  skipTypeCheck: true,
  additionalProperties: true,
}).createSchema('*');
const t1 = performance.now();

/** Fields of kubernetes-types v1.30 that k8s.io/api no longer has (PodResourceClaim.source went in 1.31). */
const REMOVED = { PodResourceClaim: ['source'] };

/** `<Type>Additions` merged into `<Type>`; the types only the additions name added; removed fields taken out. */
function addFields(base, extra) {
  for (const [name, def] of Object.entries(extra)) {
    const target = name.endsWith('Additions') ? name.slice(0, -'Additions'.length) : undefined;
    if (target === undefined) {
      base[name] ??= def;
      continue;
    }
    const into = base[target];
    if (!into || !into.properties || !def.properties)
      throw new Error(`gen-pod-schema: ${name} has no ${target} with fields to add to`);
    for (const [field, prop] of Object.entries(def.properties)) {
      if (into.properties[field]) throw new Error(`gen-pod-schema: ${target}.${field} is declared twice`);
      into.properties[field] = prop;
    }
    if (def.required?.length) into.required = [...(into.required ?? []), ...def.required];
  }
  for (const [type, fields] of Object.entries(REMOVED))
    for (const f of fields) {
      if (!base[type]?.properties?.[f]) throw new Error(`gen-pod-schema: ${type}.${f} to remove is not there`);
      delete base[type].properties[f];
      if (base[type].required) base[type].required = base[type].required.filter((r) => r !== f);
    }
  const used = JSON.stringify(base);
  for (const name of Object.keys(base))
    if (!used.includes(`"#/definitions/${name}"`) && name !== 'Pod') delete base[name];
}
addFields(raw.definitions, additions.definitions);

/** Walks every schema node and rewrites number/Quantity as the API's JSON accepts them. */
function fix(node) {
  if (Array.isArray(node)) return node.map(fix);
  if (node === null || typeof node !== 'object') return node;
  const out = {};
  for (const [k, v] of Object.entries(node)) out[k] = fix(v);
  if (out.type === 'number') out.type = 'integer';
  if (Array.isArray(out.type)) out.type = out.type.map((t) => (t === 'number' ? 'integer' : t));
  return out;
}
const schema = fix(raw);
const defs = schema.definitions;
if (!defs || !defs.Quantity) throw new Error('gen-pod-schema: no Quantity definition; the generator output changed');
defs.Quantity = { type: ['string', 'number'] };
schema.$id = 'bootlet/pod-v1';
const t2 = performance.now();

mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'pod-schema.json'), JSON.stringify(schema) + '\n');
const t4 = performance.now();
const ms = (a, b) => `${Math.round(b - a)} ms`;
console.log(
  `gen-pod-schema: ${Object.keys(defs).length} definitions; generate ${ms(t0, t1)}, fix ${ms(t1, t2)}, ` +
    `write ${ms(t2, t4)}`,
);

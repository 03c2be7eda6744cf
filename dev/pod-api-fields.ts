// Writes test/fixtures/api/pod-fields-<minor>.txt: every field of every Go struct reachable from the v1
// Pod, as a release of k8s.io/api (core/v1/types.go) and k8s.io/apimachinery (pkg/apis/meta/v1/types.go)
// declare them, with the release that added each field after the baseline (the kubernetes-types
// release the schema starts from). The fixture is what test/unit/k8s/pod-api-fields.test.ts holds the
// generated schema and the types to.
//
// `npx tsx dev/pod-api-fields.ts <k8s.io/api checkout> <k8s.io/apimachinery checkout> [--write]`
// (clones of github.com/kubernetes/api and kubernetes/apimachinery, with their `kubernetes-1.N.P` tags).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The release the fields are read at, and the one the added-in column starts after. */
const RELEASE = '1.36.3';
const BASELINE = '1.30.0';
/** Each minor's .0 tag between them: the first that has a field is the release that added it. */
const MINORS = ['1.31.0', '1.32.0', '1.33.0', '1.34.0', '1.35.0', '1.36.0'];

/** Types whose JSON is a scalar (custom marshalling), never walked into. */
const LEAF_TYPES = new Set([
  'metav1.Time',
  'metav1.MicroTime',
  'metav1.Duration',
  'metav1.FieldsV1',
  'resource.Quantity',
  'intstr.IntOrString',
  'types.UID',
]);

interface GoField {
  readonly json: string;
  readonly type: string;
}
type Structs = Map<string, GoField[]>;

/** The structs of one types.go: name (qualified with `prefix`) -> raw member lines. */
function parseStructs(source: string, prefix: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of source.split('\n')) {
    const start = /^type (\w+) struct \{$/.exec(line);
    if (start) {
      current = [];
      out.set(prefix + start[1], current);
      continue;
    }
    if (current && line === '}') {
      current = undefined;
      continue;
    }
    const code = line.trim();
    if (current && code !== '' && !code.startsWith('//')) current.push(code);
  }
  return out;
}

/** `Name Type \`json:"name,omitempty"\``, or an embedded `Type \`json:",inline"\``. */
function memberOf(line: string, pkg: string): { name?: string; type: string; json: string } | undefined {
  const m = /^(?:(\w+)\s+)?(\S+)\s+`[^`]*json:"([^"]*)"[^`]*`/.exec(line);
  if (!m) return undefined;
  const json = m[3]!.split(',')[0]!;
  const inline = m[3]!.split(',').includes('inline');
  if (json === '-') return undefined;
  return { ...(m[1] ? { name: m[1] } : {}), type: qualify(m[2]!, pkg), json: inline && json === '' ? '' : json };
}

/** A type as written in a file of package `pkg` (`metav1.` or ``), with its own package named. */
function qualify(type: string, pkg: string): string {
  return type.replace(/(^|[\]*])([A-Z]\w*)$/, (_, before: string, name: string) => `${before}${pkg}${name}`);
}

/** The struct a field's type leads to (through pointers, slices and map values), if any. */
function structOf(type: string): string {
  return type.replace(/^(\*|\[\]|map\[[^\]]+\])+/, '');
}

function readStructs(api: string, apimachinery: string, tag: string): Structs {
  const core = execFileSync('git', ['-C', api, 'show', `${tag}:core/v1/types.go`], { encoding: 'utf8' });
  const meta = execFileSync('git', ['-C', apimachinery, 'show', `${tag}:pkg/apis/meta/v1/types.go`], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const raw = new Map([...parseStructs(core, ''), ...parseStructs(meta, 'metav1.')]);
  const structs: Structs = new Map();
  const expand = (name: string): GoField[] => {
    const pkg = name.startsWith('metav1.') ? 'metav1.' : '';
    const fields: GoField[] = [];
    for (const line of raw.get(name) ?? []) {
      const m = memberOf(line, pkg);
      if (!m) continue;
      // An embedded struct with `,inline` (TypeMeta, VolumeSource, EphemeralContainerCommon) lends its fields.
      if (m.json === '') fields.push(...expand(m.type));
      else fields.push({ json: m.json, type: m.type });
    }
    return fields;
  };
  const walk = (name: string): void => {
    if (structs.has(name) || LEAF_TYPES.has(name) || !raw.has(name)) return;
    const fields = expand(name);
    structs.set(name, fields);
    for (const f of fields) walk(structOf(f.type));
  };
  walk('Pod');
  return structs;
}

function main(): void {
  const [api, apimachinery] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (!api || !apimachinery) throw new Error('usage: pod-api-fields.ts <k8s.io/api> <k8s.io/apimachinery> [--write]');
  const now = readStructs(api, apimachinery, `kubernetes-${RELEASE}`);
  const has = (s: Structs, struct: string, json: string): boolean => !!s.get(struct)?.some((f) => f.json === json);
  const baseline = readStructs(api, apimachinery, `kubernetes-${BASELINE}`);
  const minors = MINORS.map((v) => ({ v, s: readStructs(api, apimachinery, `kubernetes-${v}`) }));
  const minor = RELEASE.split('.').slice(0, 2).join('.');
  const lines = [
    `# Every field of the v1 Pod's types as of Kubernetes v${RELEASE}: every struct reachable from Pod in`,
    `# k8s.io/api v0.${RELEASE.slice(2)} core/v1/types.go (ObjectMeta and the rest of metav1 from k8s.io/apimachinery`,
    `# v0.${RELEASE.slice(2)} pkg/apis/meta/v1/types.go), written by dev/pod-api-fields.ts. One line per field:`,
    `# <Go struct>.<JSON name>, its Go type (an inline struct's fields under the struct that embeds it), and for`,
    `# a field v${BASELINE} did not have, the minor that added it. Used by test/unit/k8s/pod-api-fields.test.ts.`,
  ];
  for (const [struct, fields] of now) {
    for (const f of fields) {
      let added = '';
      if (!has(baseline, struct, f.json))
        added = minors.find((m) => has(m.s, struct, f.json))?.v.replace(/\.0$/, '') ?? '';
      lines.push(`${struct}.${f.json}\t${f.type}${added ? `\t${added}` : ''}`);
    }
  }
  // What the baseline had and this release no longer has (the API server drops it as unknown now).
  for (const [struct, fields] of baseline)
    for (const f of fields)
      if (now.has(struct) && !has(now, struct, f.json)) lines.push(`${struct}.${f.json}\t${f.type}\tremoved`);
  const text = lines.join('\n') + '\n';
  if (process.argv.includes('--write')) {
    const file = join(import.meta.dirname, `../test/fixtures/api/pod-fields-${minor}.txt`);
    writeFileSync(file, text);
    console.log(`wrote ${file}: ${lines.length - 5} fields`);
  } else process.stdout.write(text);
}

main();

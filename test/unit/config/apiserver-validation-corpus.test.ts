// The API server's own validation cases (test/fixtures/apiserver-validation, see its README), each a
// pod with the errors ValidatePodCreate gives it, run through both ways a pod enters bootlet:
// - as an API pod: the object as the API server stores it (decoded as Go decodes JSON: a missing
//   required field is its zero value) through toDesiredPod, whose refusal is the validator's;
// - as a static pod, where that is meaningful: the same object as a manifest through loadManifest
//   (decode, defaults, rules, identity). A pod that names API objects is refused there for that
//   (static-pod-references.ts) and is not counted; a case may say `static: false` (a field newer than
//   the decoder's schema) or `api: false` (ephemeral containers, which exist only after create).
// Every pod must be refused or accepted as the API server does; of the refused ones, each expected
// error's field path and type must be among bootlet's, for at least 95 % of them (the misses are
// printed). `bootlet validate` must say of each manifest what the agent's loader says.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { toDesiredPod } from '../../../src/config/api/api-pods';
import { decodePod } from '../../../src/config/decode/decode-pod';
import { loadManifest } from '../../../src/config/manifest';
import { staticPodReferenceErrors } from '../../../src/config/static-pod-references';
import { checkManifests } from '../../../src/config/validate/check-manifests';
import { applySchemeDefaults } from '../../../src/k8s/defaults';

const CORPUS = join(__dirname, '../../fixtures/apiserver-validation');
const NODE = 'node-1';
const ERROR_TYPES = [
  'Required value',
  'Invalid value',
  'Unsupported value',
  'Forbidden',
  'Duplicate value',
  'Not found',
  'Too long',
  'Too many',
] as const;

type Json = Record<string, unknown>;
interface Case {
  readonly name: string;
  readonly spec?: Json;
  readonly container?: Json;
  readonly volumes?: Json[];
  readonly metadata?: Json;
  readonly static?: boolean;
  readonly api?: boolean;
  /** Why a way is left out. */
  readonly note?: string;
  /** [field path, error type, detail substring?]; none: the API server accepts the pod. */
  readonly errors: [string, string, string?][];
}
interface Family {
  readonly file: string;
  readonly source: string;
  readonly cases: Case[];
}

const families: Family[] = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((file) => ({ file, ...(JSON.parse(readFileSync(join(CORPUS, file), 'utf8')) as Omit<Family, 'file'>) }));

/** The case's pod: a plain valid pod with the case's metadata, spec, first container and volumes over it. */
function podOf(c: Case): Json {
  const container = {
    name: 'ctr',
    image: 'image',
    imagePullPolicy: 'IfNotPresent',
    terminationMessagePolicy: 'File',
    ...c.container,
  };
  const spec: Json = { containers: [container], restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', ...c.spec };
  if (c.volumes) spec.volumes = c.volumes;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pod', namespace: 'ns', ...c.metadata }, spec };
}

/** A refusal's message is its errors joined with '; ': split where the next error's path starts. */
const splitErrors = (message: string): string[] => message.split(/; (?=(?:spec|metadata)[.[:])/);

/** The path and type of one of bootlet's errors, as the API server's field.Error prints them. */
function pathAndType(error: string): [string, string] | undefined {
  for (const t of ERROR_TYPES) {
    const at = error.indexOf(`: ${t}`);
    if (at >= 0 && (error.length === at + 2 + t.length || error[at + 2 + t.length] === ':'))
      return [error.slice(0, at), t];
  }
  return undefined;
}

/** The errors bootlet gives the case as an API pod (a valid pod it cannot mount is not refused by validation). */
function asApiPod(obj: Json): string[] {
  // The server stores Go's decoding of what it was sent; the decoder's schema predates some fields,
  // so a case with one of those is taken as sent.
  const decoded = decodePod(obj);
  const pod = (decoded.warnings.length === 0 && decoded.pod ? decoded.pod : obj) as Pod;
  pod.metadata = { ...pod.metadata, uid: '6f1c5a2e-34b1-4d0e-9a0b-3c2d1e0f9a8b' };
  pod.spec = { ...pod.spec!, nodeName: NODE };
  const r = toDesiredPod(pod, NODE, new Date(0));
  if ('refused' in r) return r.reason === 'FailedValidation' ? splitErrors(r.refused) : [];
  return r.pod.refusal ? splitErrors(r.pod.refusal.message) : [];
}

/** The errors bootlet gives the case as a manifest, or undefined where it names API objects. */
function asStaticPod(obj: Json): string[] | undefined {
  const decoded = decodePod(obj);
  if (decoded.pod && staticPodReferenceErrors(applySchemeDefaults(decoded.pod).spec!).length > 0) return undefined;
  const r = loadManifest('/etc/kubernetes/manifests/pod.json', JSON.stringify(obj), NODE, new Date(0));
  return 'error' in r ? splitErrors(r.error.message) : [];
}

interface Outcome {
  readonly agrees: boolean;
  /** Refused ones: every expected path and type among bootlet's errors. */
  readonly matches?: boolean;
  readonly got: string[];
}

function judge(c: Case, got: string[]): Outcome {
  const agrees = c.errors.length > 0 === got.length > 0;
  if (c.errors.length === 0) return { agrees, got };
  const seen = got.map(pathAndType);
  const matches = c.errors.every(([path, type, detail]) =>
    got.some((g, i) => seen[i]?.[0] === path && seen[i][1] === type && (!detail || g.includes(detail))),
  );
  return { agrees, matches, got };
}

function run(kind: 'api' | 'static') {
  const misses: string[] = [];
  let cases = 0;
  let agreed = 0;
  let refused = 0;
  let matched = 0;
  for (const f of families) {
    for (const c of f.cases) {
      if (c[kind] === false) continue;
      const got = kind === 'api' ? asApiPod(podOf(c)) : asStaticPod(podOf(c));
      if (got === undefined) continue;
      const o = judge(c, got);
      cases++;
      if (o.agrees) agreed++;
      if (c.errors.length > 0) refused++;
      if (o.matches) matched++;
      if (!o.agrees || o.matches === false)
        misses.push(
          `${f.file} / ${c.name}: expected ${c.errors.length === 0 ? 'no error' : c.errors.map((e) => e.slice(0, 2).join(' ')).join(', ')}; got ${got.length === 0 ? 'no error' : got.join(' | ')}`,
        );
    }
  }
  return { cases, agreed, refused, matched, misses };
}

describe('the API server validation corpus (test/fixtures/apiserver-validation)', () => {
  it('has the families the README lists, and several hundred cases', () => {
    const readme = readFileSync(join(CORPUS, 'README.md'), 'utf8');
    for (const f of families) expect(readme, f.file).toContain(`\`${f.file}\``);
    expect(families.reduce((n, f) => n + f.cases.length, 0)).toBeGreaterThanOrEqual(400);
  });

  describe.each(['api', 'static'] as const)('as %s pods', (kind) => {
    it('refuses or accepts every pod as the API server does, and names ≥ 95 % of the refusals by path and type', () => {
      const r = run(kind);
      const share = r.matched / r.refused;
      console.log(
        `${kind} pods: ${r.cases} cases, ${r.agreed} refused or accepted as the API server (${((100 * r.agreed) / r.cases).toFixed(1)} %), ` +
          `${r.matched} of ${r.refused} refusals with its field path and error type (${(100 * share).toFixed(1)} %)`,
      );
      if (r.misses.length > 0) console.log(`misses:\n  ${r.misses.join('\n  ')}`);
      expect(r.cases).toBeGreaterThan(0);
      expect(r.agreed).toBe(r.cases);
      expect(share).toBeGreaterThanOrEqual(0.95);
    });
  });

  it('bootlet validate says of every manifest what the loader says, word for word', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bootlet-apiserver-corpus-'));
    try {
      const expected = new Map<string, string | undefined>();
      let n = 0;
      for (const f of families)
        for (const c of f.cases) {
          if (c.static === false) continue;
          // A name of its own each, so the directory's duplicate rules leave them apart.
          const obj = podOf(c);
          obj.metadata = { ...(obj.metadata as Json), name: `pod-${n}` };
          const file = join(dir, `pod-${n++}.json`);
          const text = JSON.stringify(obj);
          writeFileSync(file, text);
          const r = loadManifest(file, text, NODE, new Date(0));
          expected.set(file, 'error' in r ? r.error.message : undefined);
        }
      const checks = await checkManifests([dir], { nodeName: NODE });
      expect(checks.map((c) => c.file).sort()).toEqual([...expected.keys()].sort());
      for (const c of checks) expect(c.result === 'refused' ? c.reason : undefined, c.file).toBe(expected.get(c.file));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

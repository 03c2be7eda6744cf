// The manifest schema (made from kubernetes-types v1.30 and src/k8s/pod-api-additions.ts by
// build/gen-pod-schema.mjs) against the Go types of k8s.io/api v1.36.3, field by field
// (test/fixtures/api/pod-fields-1.36.txt, written by dev/pod-api-fields.ts): a field the API has
// and the schema lacks would be dropped from a manifest as unknown; a field the schema has and the
// API lacks would be kept where the API server drops it. The decoder's table of Go pointers must
// agree with the Go types too (a pointer keeps an explicit zero value).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import schemaJson from '../../../src/config/generated/pod-schema.json';
import { GO_POINTER_FIELDS } from '../../../src/config/decode/go-pointer-fields';

interface Def {
  readonly properties?: Record<string, unknown>;
  readonly required?: string[];
}
const defs = (schemaJson as unknown as { definitions: Record<string, Def> }).definitions;

interface GoField {
  readonly struct: string;
  readonly json: string;
  readonly type: string;
  /** The minor that added it after v1.30, or `removed` (v1.30 had it, v1.36 has not). */
  readonly since?: string;
}

const fields: GoField[] = readFileSync(join(__dirname, '../../fixtures/api/pod-fields-1.36.txt'), 'utf8')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))
  .map((l) => {
    const [path, type, since] = l.split('\t') as [string, string, string | undefined];
    const at = path.lastIndexOf('.');
    // metav1's structs are named without their package in the schema (ObjectMeta, LabelSelector).
    return { struct: path.slice(0, at).replace(/^metav1\./, ''), json: path.slice(at + 1), type, since };
  });
const current = fields.filter((f) => f.since !== 'removed');
const structs = [...new Set(current.map((f) => f.struct))];

describe('the manifest schema against k8s.io/api v1.36 (test/fixtures/api/pod-fields-1.36.txt)', () => {
  it('reads several hundred fields of a hundred-odd structs, those added since v1.30 among them', () => {
    expect(current.length).toBeGreaterThan(500);
    expect(structs.length).toBeGreaterThan(100);
    expect(current.filter((f) => f.since).length).toBeGreaterThan(40);
  });

  it('has every struct reachable from Pod and every field of each', () => {
    const missing = current.filter((f) => !defs[f.struct]?.properties?.[f.json]).map((f) => `${f.struct}.${f.json}`);
    expect(missing).toEqual([]);
  });

  it('has no field the API does not (the ones it removed since v1.30 included)', () => {
    const extra = structs.flatMap((s) =>
      Object.keys(defs[s]?.properties ?? {})
        .filter((k) => !current.some((f) => f.struct === s && f.json === k))
        .map((k) => `${s}.${k}`),
    );
    expect(extra).toEqual([]);
    const removed = fields.filter((f) => f.since === 'removed');
    expect(removed.map((f) => `${f.struct}.${f.json}`)).toEqual(['PodResourceClaim.source']);
    for (const f of removed) expect(defs[f.struct]?.properties?.[f.json], `${f.struct}.${f.json}`).toBeUndefined();
  });

  it('requires a field of the structs added since v1.30 exactly where Go has no omitempty', () => {
    // Read from the Go declarations (json tag without omitempty): the required fields of the new types.
    const required: Record<string, string[]> = {
      FileKeySelector: ['volumeName', 'path', 'key'],
      LinuxContainerUser: ['uid', 'gid'],
      ResourceStatus: ['name'],
      ResourceHealth: ['resourceID'],
      PodExtendedResourceClaimStatus: ['requestMappings', 'resourceClaimName'],
      ContainerExtendedResourceRequest: ['containerName', 'resourceName', 'requestName'],
      NodeAllocatableResourceClaimStatus: ['resourceClaimName', 'resources'],
      // +required with omitempty: the API's schema lists them as required.
      PodCertificateProjection: ['signerName', 'keyType'],
      ContainerRestartRule: ['action'],
      ContainerRestartRuleOnExitCodes: ['operator'],
    };
    for (const [struct, fieldsOf] of Object.entries(required))
      expect(defs[struct]?.required ?? [], struct).toEqual(fieldsOf);
    for (const s of ['ImageVolumeSource', 'PodSchedulingGroup', 'ContainerUser', 'VolumeStatus', 'ImageVolumeStatus'])
      expect(defs[s]?.required, s).toBeUndefined();
  });

  it("knows a field as a Go pointer exactly where the Go type is one (the decoder's pointer table)", () => {
    // The inline VolumeSource's and EphemeralContainerCommon's fields are the embedding struct's.
    const goPointers = current.filter((f) => f.type.startsWith('*')).map((f) => `${f.struct}.${f.json}`);
    const table = Object.entries(GO_POINTER_FIELDS).flatMap(([struct, fs]) => fs.map((f) => `${struct}.${f}`));
    // Every entry of the table is a Go pointer, and every Go pointer of the decoded part (all but
    // the status, which a manifest's decoding drops) is in the table.
    expect(table.filter((t) => !goPointers.includes(t))).toEqual([]);
    const statusOnly = new Set([
      'PodStatus',
      'ContainerStatus',
      'ContainerState',
      'ContainerStateRunning',
      'ContainerStateTerminated',
      'ContainerStateWaiting',
      'PodCondition',
      'PodIP',
      'HostIP',
      'PodResourceClaimStatus',
      'VolumeMountStatus',
      'VolumeStatus',
      'ContainerUser',
      'ResourceStatus',
      'ResourceHealth',
      'PodExtendedResourceClaimStatus',
      'NodeAllocatableResourceClaimStatus',
    ]);
    const unlisted = goPointers.filter((p) => !statusOnly.has(p.slice(0, p.lastIndexOf('.'))) && !table.includes(p));
    expect(unlisted).toEqual([]);
  });
});

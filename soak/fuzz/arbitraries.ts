// Generated manifests for the parser and validator: valid pods in YAML and JSON, invalid ones (a
// valid pod with one thing wrong, or no pod at all), and hostile ones (the costs of the hardening
// issue and more: depth, width, size, aliases, tags, odd bytes). Big ones are described by the
// generator and built only when used (`make`), so that 10,000 of them fit in memory.
import fc from 'fast-check';
import { stringify } from 'yaml';

export type ManifestClass = 'valid' | 'invalid' | 'hostile';

export interface GeneratedManifest {
  readonly class: ManifestClass;
  /** What kind of input this is, e.g. "hostile/deep-json"; the table groups by class only. */
  readonly shape: string;
  make(): Buffer;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const gen = (cls: ManifestClass, shape: string, make: () => Buffer | string): GeneratedManifest => ({
  class: cls,
  shape: `${cls}/${shape}`,
  make: () => {
    const v = make();
    return typeof v === 'string' ? Buffer.from(v) : v;
  },
});

// --- valid pods -----------------------------------------------------------------------------

const dnsLabel = fc.stringMatching(/^[a-z]([a-z0-9-]{0,20}[a-z0-9])?$/);
const envName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/);
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    'yes',
    'no',
    'on',
    'null',
    '~',
    '0x1F',
    '1e3',
    '-',
    '#',
    ': x',
    '"',
    "'",
    '\\',
    '*a',
    '&a',
    '!!str',
  ),
);
const image = fc.constantFrom(
  'bootlet.local/busybox:1.36',
  'registry.k8s.io/etcd:3.5.15-0',
  'nginx',
  'example.com:5000/a/b@sha256:' + 'a'.repeat(64),
);
const quantity = fc.constantFrom('100m', '1', '0.5', '128Mi', '1Gi', '2', '250m', '1e3', '64M');

const probe = fc.oneof(
  fc.record({
    exec: fc.record({ command: fc.array(anyText, { minLength: 1, maxLength: 3 }) }),
    periodSeconds: fc.integer({ min: 1, max: 60 }),
  }),
  fc.record({
    httpGet: fc.record({
      path: fc.constantFrom('/healthz', '/livez', '/'),
      port: fc.integer({ min: 1, max: 65535 }),
      scheme: fc.constantFrom('HTTP', 'HTTPS'),
    }),
    failureThreshold: fc.integer({ min: 1, max: 10 }),
  }),
  fc.record({
    tcpSocket: fc.record({ port: fc.integer({ min: 1, max: 65535 }) }),
    initialDelaySeconds: fc.integer({ min: 0, max: 30 }),
  }),
);

const container = (name: fc.Arbitrary<string>) =>
  fc.record(
    {
      name,
      image,
      command: fc.array(anyText, { maxLength: 4 }),
      args: fc.array(anyText, { maxLength: 6 }),
      env: fc.uniqueArray(fc.record({ name: envName, value: anyText }), { maxLength: 5, selector: (e) => e.name }),
      ports: fc.uniqueArray(
        fc.record({ containerPort: fc.integer({ min: 1, max: 65535 }), protocol: fc.constantFrom('TCP', 'UDP') }),
        { maxLength: 3, selector: (p) => `${p.containerPort}/${p.protocol}` },
      ),
      resources: fc.record(
        { requests: fc.record({ cpu: quantity, memory: quantity }, { requiredKeys: [] }) },
        { requiredKeys: [] },
      ),
      livenessProbe: probe,
      readinessProbe: probe,
      imagePullPolicy: fc.constantFrom('Always', 'IfNotPresent', 'Never'),
      volumeMounts: fc.constant([{ name: 'data', mountPath: '/data' }]),
    },
    { requiredKeys: ['name', 'image'] },
  );

const podObject: fc.Arbitrary<Record<string, Json>> = fc
  .record({
    name: dnsLabel,
    namespace: fc.option(fc.constantFrom('default', 'kube-system', 'etcd'), { nil: undefined }),
    labels: fc.dictionary(dnsLabel, dnsLabel, { maxKeys: 4 }),
    // A key prefix must be a DNS subdomain (the API server, and bootlet, refuse "a..b/x").
    annotations: fc.dictionary(fc.stringMatching(/^[a-z0-9]{1,10}(\.[a-z0-9]{1,8})?\/[a-z]{1,10}$/), anyText, {
      maxKeys: 3,
    }),
    containers: fc.uniqueArray(container(dnsLabel), { minLength: 1, maxLength: 3, selector: (c) => c.name }),
    // Control-plane pods use the host's network, and the soak's containerd has no CNI for others.
    hostNetwork: fc.constant(true),
    priorityClassName: fc.option(fc.constant('system-node-critical'), { nil: undefined }),
    restartPolicy: fc.constantFrom('Always', 'OnFailure', 'Never'),
    grace: fc.integer({ min: 0, max: 120 }),
    hostPath: fc.constantFrom('/var/lib/etcd', '/etc/kubernetes/pki', '/tmp/x'),
    dataVolume: fc.constantFrom('emptyDir', 'hostPath'),
  })
  .map((p) => {
    const volume: Json =
      p.dataVolume === 'emptyDir'
        ? { name: 'data', emptyDir: {} }
        : { name: 'data', hostPath: { path: p.hostPath, type: 'DirectoryOrCreate' } };
    const metadata: Record<string, Json> = { name: p.name, labels: p.labels, annotations: p.annotations };
    if (p.namespace) metadata.namespace = p.namespace;
    const spec: Record<string, Json> = {
      hostNetwork: p.hostNetwork,
      restartPolicy: p.restartPolicy,
      terminationGracePeriodSeconds: p.grace,
      containers: p.containers as unknown as Json[],
      volumes: [volume],
    };
    if (p.priorityClassName) spec.priorityClassName = p.priorityClassName;
    return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
  });

/**
 * YAML (block, or flow below the top level), or JSON (compact or indented). YAML 1.1 as the API
 * machinery reads it, so that `yes` stays a string. A document that starts with `{` is JSON to the
 * kubelet (and to bootlet), so flow style stops below the top.
 */
const serialize = (o: Json, how: number): string => {
  const yaml11 = { version: '1.1' as const };
  switch (how % 4) {
    case 0:
      return stringify(o, yaml11);
    case 1:
      if (o === null || typeof o !== 'object' || Array.isArray(o))
        return stringify(o, { ...yaml11, collectionStyle: 'flow' });
      return Object.entries(o)
        .map(
          ([k, v]) =>
            `${stringify(k, yaml11).trim()}: ${stringify(v, { ...yaml11, collectionStyle: 'flow', lineWidth: 0 }).trim()}`,
        )
        .join('\n');
    case 2:
      return JSON.stringify(o);
    default:
      return JSON.stringify(o, null, 2);
  }
};

const valid: fc.Arbitrary<GeneratedManifest> = fc
  .tuple(podObject, fc.nat())
  .map(([o, how]) => gen('valid', ['yaml', 'yaml-flow', 'json', 'json-indented'][how % 4]!, () => serialize(o, how)));

// --- invalid: one thing wrong -----------------------------------------------------------------

type Mutation = (o: Record<string, Json>) => Json;
const spec = (o: Record<string, Json>) => o.spec as Record<string, Json>;
const meta = (o: Record<string, Json>) => o.metadata as Record<string, Json>;
const first = (o: Record<string, Json>) => (spec(o).containers as Record<string, Json>[])[0]!;

const mutations: Record<string, Mutation> = {
  'no-containers': (o) => ((spec(o).containers = []), o),
  'no-name': (o) => (delete meta(o).name, o),
  'bad-name': (o) => ((meta(o).name = 'Not_A.Name!'), o),
  'long-name': (o) => ((meta(o).name = 'a'.repeat(300)), o),
  'bad-uid': (o) => ((meta(o).uid = '../../../../../ESCAPED/evil'), o),
  'long-uid': (o) => ((meta(o).uid = 'a'.repeat(37)), o),
  'relative-hostpath': (o) => ((spec(o).volumes = [{ name: 'data', hostPath: { path: 'etc/kubernetes' } }]), o),
  'dotdot-hostpath': (o) => (
    (spec(o).volumes = [{ name: 'data', hostPath: { path: '/etc/kubernetes/../../root' } }]),
    o
  ),
  'subpath-escape': (o) => ((first(o).volumeMounts = [{ name: 'data', mountPath: '/d', subPath: '../../etc' }]), o),
  'absolute-subpath': (o) => ((first(o).volumeMounts = [{ name: 'data', mountPath: '/d', subPath: '/etc' }]), o),
  'duplicate-containers': (o) => ((spec(o).containers = [first(o), first(o)]), o),
  'bad-port': (o) => ((first(o).ports = [{ containerPort: 70000 }]), o),
  'bad-quantity': (o) => ((first(o).resources = { limits: { memory: '12Q' } }), o),
  'bad-restart-policy': (o) => ((spec(o).restartPolicy = 'Sometimes'), o),
  'wrong-type-string': (o) => ((first(o).image = 42), o),
  'wrong-type-object': (o) => ((spec(o).containers = 'main'), o),
  'wrong-type-array': (o) => ((o.metadata = ['x']), o),
  'wrong-kind': (o) => ((o.kind = 'Deployment'), o),
  'wrong-api-version': (o) => ((o.apiVersion = 'apps/v1'), o),
  'missing-volume': (o) => ((spec(o).volumes = []), o),
  'unknown-fields': (o) => ((spec(o).notAField = { deeply: [1, 2, 3] }), (first(o).alsoNot = true), o),
  'null-everywhere': (o) => ((spec(o).containers = [null]), o),
  'top-level-list': (o) => [o],
  'top-level-scalar': () => 'just a string',
  'top-level-null': () => null,
};

/** Mutations after which the pod is still one the API server would take (with a warning). */
const STILL_VALID = new Set(['unknown-fields']);

const invalidPod: fc.Arbitrary<GeneratedManifest> = fc
  .tuple(podObject, fc.constantFrom(...Object.keys(mutations)), fc.nat())
  .map(([o, m, how]) =>
    gen(STILL_VALID.has(m) ? 'valid' : 'invalid', m, () => serialize(mutations[m]!(structuredClone(o)), how)),
  );

const invalidText: fc.Arbitrary<GeneratedManifest> = fc.oneof(
  fc.uint8Array({ maxLength: 2000 }).map((b) => gen('invalid', 'random-bytes', () => Buffer.from(b))),
  fc.string({ maxLength: 500 }).map((s) => gen('invalid', 'random-text', () => s)),
  fc.tuple(podObject, fc.nat(), fc.double({ min: 0, max: 1, noNaN: true })).map(([o, how, at]) =>
    gen('invalid', 'truncated', () => {
      const s = serialize(o, how);
      return s.slice(0, Math.floor(s.length * at));
    }),
  ),
  fc
    .tuple(podObject, fc.nat())
    .map(([o, how]) =>
      gen('invalid', 'two-documents', () => `${serialize(o, how % 2)}\n---\n${serialize(o, how % 2)}`),
    ),
  podObject.map((o) =>
    gen(
      'invalid',
      'duplicate-keys',
      () =>
        `apiVersion: v1\nkind: Pod\nkind: Pod\n${stringify({ metadata: o.metadata, spec: o.spec }, { version: '1.1' })}`,
    ),
  ),
  podObject.map((o) => gen('invalid', 'tab-indented', () => stringify(o, { version: '1.1' }).replace(/^ {2}/gm, '\t'))),
  podObject.map((o) =>
    gen('invalid', 'invalid-utf8', () =>
      Buffer.concat([Buffer.from(stringify(o, { version: '1.1' })), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0x0a])]),
    ),
  ),
  fc
    .constantFrom(
      '',
      ' ',
      '\n',
      '---',
      '--- |\n  x',
      '{}',
      '[]',
      'null',
      '"',
      '{"a":',
      'a: b: c',
      '? a\n: b',
      '%YAML 1.1\n---\na: 1',
    )
    .map((s) => gen('invalid', 'tiny', () => s)),
);

// --- hostile --------------------------------------------------------------------------------

const MiB = 1024 * 1024;
const HEAD =
  'apiVersion: v1\nkind: Pod\nmetadata: {name: hostile}\nspec:\n  hostNetwork: true\n  containers: [{name: c, image: i}]\n';
const JHEAD =
  '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"hostile"},"spec":{"hostNetwork":true,"containers":[{"name":"c","image":"i"}]},';

/** A size in bytes, biased to the small end but reaching the 10 MiB cap (and just past it). */
const size = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1024, max: 64 * 1024 }) },
  { weight: 3, arbitrary: fc.integer({ min: 64 * 1024, max: MiB }) },
  { weight: 1, arbitrary: fc.integer({ min: MiB, max: 10 * MiB + 16 }) },
);

const fill = (unit: string, bytes: number): string => unit.repeat(Math.max(1, Math.floor(bytes / unit.length)));

const hostile: fc.Arbitrary<GeneratedManifest> = fc.oneof(
  fc
    .integer({ min: 50, max: 100_000 })
    .map((d) => gen('hostile', 'deep-json', () => `${JHEAD}"x":${'['.repeat(d)}${']'.repeat(d)}}`)),
  fc
    .integer({ min: 50, max: 100_000 })
    .map((d) => gen('hostile', 'deep-json-objects', () => `${JHEAD}"x":${'{"a":'.repeat(d)}1${'}'.repeat(d)}}`)),
  fc
    .integer({ min: 50, max: 50_000 })
    .map((d) => gen('hostile', 'deep-yaml-flow', () => `${HEAD}x: ${'['.repeat(d)}${']'.repeat(d)}\n`)),
  fc
    .integer({ min: 50, max: 3000 })
    .map((d) =>
      gen(
        'hostile',
        'deep-yaml-block',
        () => `${HEAD}x:\n${Array.from({ length: d }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')}\n`,
      ),
    ),
  fc
    .integer({ min: 50, max: 50_000 })
    .map((d) => gen('hostile', 'deep-yaml-dashes', () => `${HEAD}x:\n${'- '.repeat(d)}y\n`)),
  size.map((n) => gen('hostile', 'yaml-flow-list', () => `${HEAD}x: [${fill('1,', n)}1]\n`)),
  size.map((n) => gen('hostile', 'yaml-block-list', () => `${HEAD}x:\n${fill('- 1\n', n)}`)),
  size.map((n) => gen('hostile', 'json-array', () => `${JHEAD}"x":[${fill('1,', n)}1]}`)),
  size.map((n) =>
    gen(
      'hostile',
      'many-keys',
      () => `${HEAD}x:\n${Array.from({ length: Math.floor(n / 12) }, (_, i) => `  k${i}: v`).join('\n')}\n`,
    ),
  ),
  size.map((n) => gen('hostile', 'long-string', () => `${HEAD}  args: ["${fill('A', n)}"]\n`)),
  size.map((n) => gen('hostile', 'long-line-no-newline', () => fill('x', n))),
  size.map((n) => gen('hostile', 'whitespace', () => `${HEAD}${fill(' \n\t', n)}`)),
  size.map((n) => gen('hostile', 'broken-json-at-end', () => `${JHEAD}"x":"${fill('s3cr3t', n)}", }`)),
  size.map((n) => gen('hostile', 'many-documents', () => fill('---\na: 1\n', n))),
  size.map((n) => gen('hostile', 'comments', () => `${HEAD}${fill('# comment line\n', n)}`)),
  fc
    .record({ list: fc.integer({ min: 1000, max: 100_000 }), aliases: fc.integer({ min: 10, max: 120 }) })
    .map(({ list, aliases }) =>
      gen(
        'hostile',
        'alias-bomb',
        () =>
          `${HEAD}base: &a [${fill('1,', list * 2)}1]\n${Array.from({ length: aliases }, (_, i) => `k${i}: *a`).join('\n')}\n`,
      ),
    ),
  fc.integer({ min: 3, max: 12 }).map((levels) =>
    gen('hostile', 'billion-laughs', () => {
      let s = `${HEAD}l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n`;
      for (let i = 1; i <= levels; i++)
        s += `l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(', ')}]\n`;
      return s;
    }),
  ),
  fc
    .integer({ min: 1, max: 200 })
    .map((n) =>
      gen(
        'hostile',
        'merge-keys',
        () =>
          `${HEAD}b0: &b0 {x: 1}\n${Array.from({ length: n }, (_, i) => `b${i + 1}: &b${i + 1}\n  <<: *b${i}\n  y${i}: 1`).join('\n')}\n`,
      ),
    ),
  fc
    .constantFrom(
      'a: &a [1, *a]',
      'a: &a {b: *a}',
      'a: *missing',
      '&a a: *a',
      'a: !!binary AAAA',
      'a: !!js/function "x"',
      'a: !custom {}',
      'a: !!set {x, y}',
      'a: !!omap [x: 1]',
      'a: !!timestamp 2001-12-14',
      'a: .nan',
      'a: -.inf',
      `a: ${'9'.repeat(5000)}`,
      'a: 1e999999',
      'a: 0o777',
      'a: 0x_FF',
      '? [a, b]\n: c',
      '? {a: 1}\n: b',
      '<<: [*a]',
      'a: "\\u0000\\u2028\\u202e"',
    )
    .map((s) => gen('hostile', 'yaml-oddity', () => `${HEAD}${s}\n`)),
  fc
    .constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty')
    .map((k) =>
      gen(
        'hostile',
        'prototype-keys',
        () => `${JHEAD}"${k}":{"polluted":true},"metadata":{"name":"hostile","${k}":{"x":1},"labels":{"${k}":"v"}}}`,
      ),
    ),
  fc
    .integer({ min: 1, max: 200 })
    .map((n) =>
      gen(
        'hostile',
        'binary-tag-big',
        () => `${HEAD}x: !!binary |\n${fill('  QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\n', n * 1024)}`,
      ),
    ),
  fc
    .integer({ min: 1, max: 4096 })
    .map((n) =>
      gen('hostile', 'nul-and-controls', () =>
        Buffer.concat([Buffer.from(HEAD), Buffer.alloc(n, 0), Buffer.from('\x1b[2J\r\n\u2028\u202e')]),
      ),
    ),
  fc.constant(gen('hostile', 'bom-and-crlf', () => `\ufeff${HEAD.replace(/\n/g, '\r\n')}`)),
  fc.constant(gen('hostile', 'over-10-MiB', () => `${HEAD}${fill('# pad\n', 10 * MiB + 10)}`)),
  fc.integer({ min: 1, max: 5000 }).map((n) =>
    gen('hostile', 'many-containers', () =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'wide' },
        spec: { hostNetwork: true, containers: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: 'i' })) },
      }),
    ),
  ),
  fc.integer({ min: 1, max: 20_000 }).map((n) =>
    gen('hostile', 'many-env', () =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'env' },
        spec: {
          hostNetwork: true,
          containers: [
            {
              name: 'c',
              image: 'i',
              env: Array.from({ length: n }, (_, i) => ({ name: `E${i}`, value: `$(E${i - 1})` })),
            },
          ],
        },
      }),
    ),
  ),
);

export const manifestArbitrary: fc.Arbitrary<GeneratedManifest> = fc.oneof(
  { weight: 3, arbitrary: valid },
  { weight: 2, arbitrary: invalidPod },
  { weight: 1, arbitrary: invalidText },
  { weight: 3, arbitrary: hostile },
);

/** The same `count` manifests for the same seed, whichever process asks. */
export function generateManifests(seed: number, count: number): GeneratedManifest[] {
  return fc.sample(manifestArbitrary, { seed, numRuns: count });
}

/** Only hostile ones (for the agent), from the same generator. */
export function generateHostile(seed: number, count: number): GeneratedManifest[] {
  return fc.sample(
    fc.oneof(
      { weight: 3, arbitrary: hostile },
      { weight: 1, arbitrary: invalidPod },
      { weight: 1, arbitrary: invalidText },
    ),
    { seed, numRuns: count },
  );
}

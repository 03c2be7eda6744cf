import { describe, expect, it } from 'vitest';
import { decodePod } from '../../../src/config/decode/decode-pod';
import { pod } from './helpers';

const decode = (o: unknown) => decodePod(o as Record<string, unknown>);
const spec = (o: unknown) => decode(o).pod?.spec;

describe('decodePod: types', () => {
  it('accepts a plain pod with no warnings', () => {
    expect(decode(pod())).toEqual({ pod: pod(), errors: [], warnings: [] });
  });

  it('names the field path of a wrong type and what was found', () => {
    const r = decode(pod({ containers: [{ name: 'c', image: 'i', ports: [{ containerPort: '80' }] }] }));
    expect(r.errors).toEqual(['spec.containers[0].ports[0].containerPort: must be an integer, found a string']);
    expect(r.pod).toBeUndefined();
  });

  it('refuses a fractional int32', () => {
    expect(decode(pod({ terminationGracePeriodSeconds: 1.5 })).errors).toEqual([
      'spec.terminationGracePeriodSeconds: must be an integer, found a fractional number',
    ]);
  });

  it('reports every wrong type, not just the first', () => {
    const r = decode(pod({ hostNetwork: 'yes', containers: [{ name: 'c', image: 7 }] }));
    expect(r.errors).toEqual(
      expect.arrayContaining([
        'spec.hostNetwork: must be a boolean, found a string',
        'spec.containers[0].image: must be a string, found a number',
      ]),
    );
  });

  it('decodes a missing required field, or null, to its Go zero value (validation judges it), a pointer to nil', () => {
    const r = decode(
      pod({
        containers: [{ image: 'i', ports: [{ containerPort: null }], livenessProbe: { tcpSocket: {} } }],
        volumes: [{ name: 'v', scaleIO: { system: 's' } }],
      }),
    );
    expect(r.errors).toEqual([]);
    const s = r.pod!.spec!;
    expect(s.containers[0]!.name).toBe('');
    expect(s.containers[0]!.ports).toEqual([{ containerPort: 0 }]);
    expect(s.containers[0]!.livenessProbe?.tcpSocket).toEqual({ port: 0 });
    // scaleIO's secretRef is required in the schema but a Go pointer: left out, not refused.
    expect(s.volumes?.[0]?.scaleIO).toEqual({ system: 's', gateway: '' });
  });

  it('keeps a required field at its zero value (an empty header value is a value)', () => {
    const s = spec(
      pod({
        containers: [
          { name: 'c', image: 'i', livenessProbe: { httpGet: { port: 80, httpHeaders: [{ name: 'X', value: '' }] } } },
        ],
      }),
    );
    expect(s?.containers[0]?.livenessProbe?.httpGet?.httpHeaders).toEqual([{ name: 'X', value: '' }]);
  });

  it('accepts quantities as numbers or strings, and keeps them as strings', () => {
    const s = spec(
      pod({
        containers: [
          { name: 'c', image: 'i', resources: { limits: { cpu: 1, memory: '1Gi' }, requests: { cpu: 0.5 } } },
        ],
      }),
    );
    expect(s?.containers[0]?.resources).toEqual({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '0.5' } });
  });

  it('refuses a quantity that does not parse, wherever it is (once accepted, then failing at every container start)', () => {
    const bad = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    const r = decode(
      pod({
        containers: [
          {
            name: 'c',
            image: 'i',
            resources: { limits: { memory: '12Q' }, requests: { cpu: '1.5.5' } },
            env: [{ name: 'L', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: 'x' } } }],
          },
        ],
        volumes: [{ name: 'v', emptyDir: { sizeLimit: '1Gb' } }],
        overhead: { cpu: '' },
      }),
    );
    expect(r.pod).toBeUndefined();
    expect(r.errors).toEqual(
      expect.arrayContaining([
        `spec.containers[0].resources.limits.memory: Invalid value: "12Q": ${bad}`,
        `spec.containers[0].resources.requests.cpu: Invalid value: "1.5.5": ${bad}`,
        `spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "x": ${bad}`,
        `spec.volumes[0].emptyDir.sizeLimit: Invalid value: "1Gb": ${bad}`,
        `spec.overhead.cpu: Invalid value: "": ${bad}`,
      ]),
    );
    expect(r.errors).toHaveLength(5);
    for (const ok of ['100m', '1', '0.5', '.5', '1e3', '128Mi', '2Gi', '1k', '+1', '5.']) {
      expect(
        decode(pod({ containers: [{ name: 'c', image: 'i', resources: { limits: { cpu: ok } } }] })).errors,
        ok,
      ).toEqual([]);
    }
  });

  it('accepts int-or-string ports as either, but not as a fraction', () => {
    const probe = (port: unknown) =>
      pod({ containers: [{ name: 'c', image: 'i', livenessProbe: { httpGet: { port } } }] });
    expect(decode(probe(8080)).errors).toEqual([]);
    expect(decode(probe('http')).errors).toEqual([]);
    expect(decode(probe(80.5)).errors).toEqual([
      'spec.containers[0].livenessProbe.httpGet.port: must be an integer or a string, found a fractional number',
    ]);
  });
});

describe('decodePod: unknown fields', () => {
  it('drops them, naming each by path', () => {
    const r = decode(
      pod({ containers: [{ name: 'c', image: 'i', imagePullPolcy: 'Always' }], bogus: { deep: [1, 2, 3] } }),
    );
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual(['unknown field "spec.containers[0].imagePullPolcy"', 'unknown field "spec.bogus"']);
    expect(r.pod?.spec).toEqual({ containers: [{ name: 'c', image: 'i' }] });
  });

  it('does not warn inside maps (labels, annotations, resources)', () => {
    const r = decode(
      pod({ nodeSelector: { 'kubernetes.io/os': 'linux' } }, { name: 'x', labels: { anything: 'goes' } }),
    );
    expect(r.warnings).toEqual([]);
  });
});

describe('decodePod: null, zero and empty values, as Go decodes them', () => {
  it('treats null as unset anywhere, including creationTimestamp: null', () => {
    const r = decode({
      ...pod({ hostname: null, dnsConfig: null }),
      metadata: { name: 'web', creationTimestamp: null, labels: null },
    });
    expect(r.errors).toEqual([]);
    expect(r.pod).toEqual(pod());
  });

  it('drops status and the metadata the API server sets itself', () => {
    const r = decode({
      ...pod(),
      metadata: {
        name: 'web',
        creationTimestamp: '2024-01-01T00:00:00Z',
        resourceVersion: '5',
        generation: 2,
        selfLink: '/x',
        managedFields: [{ manager: 'm' }],
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    expect(r.pod).toEqual(pod());
    expect(r.warnings).toEqual([]);
  });

  it('drops an optional non-pointer field at its zero value: false, 0, "", [], {}', () => {
    const r = decode(
      pod({
        hostPID: false,
        hostNetwork: false,
        hostname: '',
        volumes: [],
        nodeSelector: {},
        containers: [
          {
            name: 'c',
            image: 'i',
            resources: {},
            args: [],
            workingDir: '',
            tty: false,
            ports: [{ containerPort: 80, hostPort: 0 }],
          },
        ],
      }),
    );
    expect(r.pod?.spec).toEqual({ containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }] }] });
  });

  it('keeps a pointer field at its zero value: privileged: false and emptyDir: {} mean something', () => {
    const s = spec(
      pod({
        enableServiceLinks: false,
        terminationGracePeriodSeconds: 0,
        volumes: [{ name: 'v', emptyDir: {} }],
        containers: [
          {
            name: 'c',
            image: 'i',
            securityContext: { privileged: false, allowPrivilegeEscalation: false, runAsUser: 0 },
          },
        ],
      }),
    );
    expect(s).toEqual({
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 0,
      volumes: [{ name: 'v', emptyDir: {} }],
      containers: [
        {
          name: 'c',
          image: 'i',
          securityContext: { privileged: false, allowPrivilegeEscalation: false, runAsUser: 0 },
        },
      ],
    });
  });

  it('gives a null list item or map value its zero value, as Go does', () => {
    const s = spec(pod({ containers: [{ name: 'c', image: 'i', args: ['a', null] }], nodeSelector: { k: null } }));
    expect(s?.containers[0]?.args).toEqual(['a', '']);
    expect(s?.nodeSelector).toEqual({ k: '' });
  });

  it('keeps __proto__ as an ordinary field name', () => {
    const o = JSON.parse(
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w","labels":{"__proto__":"x"}},"spec":{"containers":[{"name":"c","image":"i"}]}}',
    );
    const r = decode(o);
    expect(Object.keys(r.pod?.metadata?.labels ?? {})).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(r.pod?.metadata?.labels)).toBe(Object.prototype);
  });
});

describe('decodePod: bounds', () => {
  it('refuses a pod larger than the decoded-size limit, counting what aliases share', () => {
    const big = 'x'.repeat(64 * 1024);
    // One string referenced 30 times: 64 KiB in the parsed object, ~2 MiB once decoded.
    const args = Array.from({ length: 30 }, () => big);
    expect(() => decode(pod({ containers: [{ name: 'c', image: 'i', args }] }))).toThrow(/larger than 1.5 MiB/);
  });
});

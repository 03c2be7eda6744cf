// An env var's valueFrom and envFrom sources as the API server checks them, in its words.
import { describe, expect, it } from 'vitest';
import { pod } from '../helpers';
import { c, problems } from './problems';

const withEnv = (env: unknown[]) => pod({ containers: [c({ env })] });
const E = 'spec.containers[0].env[0].valueFrom';

describe('env valueFrom', () => {
  it('not beside a value, and exactly one source', () => {
    expect(
      problems(withEnv([{ name: 'N', value: 'x', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }])),
    ).toEqual([`${E}: Invalid value: "": may not be specified when \`value\` is not empty`]);
    expect(problems(withEnv([{ name: 'N', valueFrom: {} }]))).toEqual([
      `${E}: Invalid value: "": must specify one of: \`fieldRef\`, \`resourceFieldRef\`, \`configMapKeyRef\` or \`secretKeyRef\``,
    ]);
    expect(
      problems(
        withEnv([
          {
            name: 'N',
            valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' }, resourceFieldRef: { resource: 'limits.cpu' } },
          },
        ]),
      ),
    ).toEqual([`${E}: Invalid value: "": may not have more than one field specified at a time`]);
  });
  it('a fieldRef the v1 conversion knows and an env var may read', () => {
    expect(problems(withEnv([{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'spec.nope' } } }]))).toEqual([
      `${E}.fieldRef.fieldPath: Invalid value: "spec.nope": error converting fieldPath: field label not supported: spec.nope`,
    ]);
    expect(problems(withEnv([{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'status.phase' } } }]))).toEqual([
      `${E}.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: "metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`,
    ]);
    expect(problems(withEnv([{ name: 'N', valueFrom: { fieldRef: { fieldPath: "spec.nodeName['x']" } } }]))).toEqual([
      `${E}.fieldRef.fieldPath: Invalid value: "spec.nodeName['x']": error converting fieldPath: field label does not support subscript: spec.nodeName['x']`,
    ]);
    for (const fieldPath of ['spec.host', 'status.podIPs', "metadata.labels['app']"])
      expect(problems(withEnv([{ name: 'N', valueFrom: { fieldRef: { fieldPath } } }]))).toEqual([]);
  });
  it('a resourceFieldRef names a resource and a divisor it takes', () => {
    expect(
      problems(withEnv([{ name: 'N', valueFrom: { resourceFieldRef: { resource: 'requests.gpu' } } }]))[0],
    ).toMatch(
      /^spec\.containers\[0\]\.env\[0\]\.valueFrom\.resourceFieldRef\.resource: Unsupported value: "requests\.gpu": supported values: "limits\.cpu"/,
    );
    expect(
      problems(withEnv([{ name: 'N', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '3' } } }])),
    ).toEqual([
      `${E}.resourceFieldRef.divisor: Invalid value: "limits.memory": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource`,
    ]);
    expect(
      problems(withEnv([{ name: 'N', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } }])),
    ).toEqual([]);
  });
  it('a key reference (an API pod may have one) names an object and a valid key', () => {
    expect(
      problems(withEnv([{ name: 'N', valueFrom: { configMapKeyRef: { name: 'cm', key: '../k' } } }]), 'api'),
    ).toEqual([
      `${E}.configMapKeyRef.key: Invalid value: "../k": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      `${E}.configMapKeyRef.key: Invalid value: "../k": must not start with '..'`,
    ]);
  });
});

describe('envFrom', () => {
  it('names one source (the API server names the list)', () => {
    expect(problems(pod({ containers: [c({ envFrom: [{ prefix: 'P_' }] })] }), 'api')).toEqual([
      'spec.containers[0].envFrom: Invalid value: "": must specify one of: `configMapRef` or `secretRef`',
    ]);
    expect(
      problems(
        pod({ containers: [c({ envFrom: [{ configMapRef: { name: 'a' }, secretRef: { name: 'b' } }] })] }),
        'api',
      ),
    ).toEqual(['spec.containers[0].envFrom: Invalid value: "": may not have more than one field specified at a time']);
  });
});

// Volume sources as the API server checks them, in its words: file paths stay inside the volume,
// downward API fields are ones it supports, modes are 0 to 0777, sizes are not negative.
import { describe, expect, it } from 'vitest';
import { pod } from '../helpers';
import { c, problems } from './problems';

const volume = (v: Record<string, unknown>) => pod({ volumes: [{ name: 'v', ...v }] });
const MODE_MSG = 'must be a number between 0 and 0777 (octal), both inclusive';
const file = (f: Record<string, unknown>) => volume({ downwardAPI: { items: [f] } });
const D = 'spec.volumes[0].downwardAPI';

describe('downwardAPI volumes', () => {
  it('a file path is relative with no ".." element and does not start with ".." (the API server names the source, not the item)', () => {
    expect(problems(file({ path: '../x', fieldRef: { fieldPath: 'metadata.name' } }))).toEqual([
      `${D}.path: Invalid value: "../x": must not contain '..'`,
    ]);
    expect(problems(file({ path: '/etc/passwd', fieldRef: { fieldPath: 'metadata.name' } }))).toEqual([
      `${D}.path: Invalid value: "/etc/passwd": must be a relative path`,
    ]);
    expect(problems(file({ path: '..data', fieldRef: { fieldPath: 'metadata.name' } }))).toEqual([
      `${D}.path: Invalid value: "..data": must not start with '..'`,
    ]);
    expect(problems(file({ path: 'labels/..x', fieldRef: { fieldPath: 'metadata.labels' } }))).toEqual([]);
  });
  it('names a field the volume supports, converted as v1 converts it', () => {
    expect(problems(file({ path: 'n', fieldRef: { fieldPath: 'spec.nope' } }))).toEqual([
      `${D}.fieldRef.fieldPath: Invalid value: "spec.nope": error converting fieldPath: field label not supported: spec.nope`,
    ]);
    expect(problems(file({ path: 'n', fieldRef: { fieldPath: 'spec.nodeName' } }))).toEqual([
      `${D}.fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"`,
    ]);
    expect(problems(file({ path: 'n', fieldRef: { apiVersion: 'v2', fieldPath: 'metadata.name' } }))).toEqual([
      `${D}.fieldRef.fieldPath: Invalid value: "metadata.name": error converting fieldPath: unsupported pod version: v2`,
    ]);
    expect(problems(file({ path: 'n', fieldRef: { fieldPath: "metadata.labels['a b']" } }))[0]).toMatch(
      /^spec\.volumes\[0\]\.downwardAPI\.fieldRef: Invalid value: "a b": name part must consist/,
    );
    expect(problems(file({ path: 'n', fieldRef: { fieldPath: "metadata.annotations['Example.com/Key']" } }))).toEqual(
      [],
    );
  });
  it('one of fieldRef and resourceFieldRef, a resource it exposes with a divisor it takes, and a mode in range', () => {
    expect(problems(file({ path: 'n' }))).toEqual([
      `${D}: Required value: one of fieldRef and resourceFieldRef is required`,
    ]);
    expect(
      problems(
        file({
          path: 'n',
          fieldRef: { fieldPath: 'metadata.name' },
          resourceFieldRef: { containerName: 'c', resource: 'limits.cpu' },
        }),
      ),
    ).toEqual([`${D}: Invalid value: "resource": fieldRef and resourceFieldRef can not be specified simultaneously`]);
    expect(problems(file({ path: 'n', resourceFieldRef: { resource: 'limits.cpu' } }))).toEqual([
      `${D}.resourceFieldRef.containerName: Required value`,
    ]);
    expect(problems(file({ path: 'n', resourceFieldRef: { containerName: 'c', resource: 'limits.gpu' } }))).toEqual([
      `${D}.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.memory"`,
    ]);
    expect(
      problems(file({ path: 'n', resourceFieldRef: { containerName: 'c', resource: 'limits.cpu', divisor: '10m' } })),
    ).toEqual([
      `${D}.resourceFieldRef.divisor: Invalid value: "limits.cpu": only divisor's values 1m and 1 are supported with the cpu resource`,
    ]);
    expect(
      problems(
        file({ path: 'n', resourceFieldRef: { containerName: 'c', resource: 'limits.memory', divisor: '1024Ki' } }),
      ),
    ).toEqual([]);
    expect(problems(file({ path: 'n', mode: 512, fieldRef: { fieldPath: 'metadata.name' } }))).toEqual([
      `${D}.mode: Invalid value: 512: ${MODE_MSG}`,
    ]);
    expect(problems(volume({ downwardAPI: { defaultMode: -1 } }))).toEqual([
      `${D}.defaultMode: Invalid value: -1: ${MODE_MSG}`,
    ]);
  });
  it('a volume with a problem is not there for its mounts', () => {
    const p = pod({
      volumes: [{ name: 'v', downwardAPI: { items: [{ path: '../x', fieldRef: { fieldPath: 'metadata.name' } }] } }],
      containers: [c({ volumeMounts: [{ name: 'v', mountPath: '/v' }] })],
    });
    expect(problems(p)).toEqual([
      `${D}.path: Invalid value: "../x": must not contain '..'`,
      'spec.containers[0].volumeMounts[0].name: Not found: "v"',
    ]);
  });
});

describe('projected, configMap and secret volumes (an API pod may carry the last two)', () => {
  it('projected downwardAPI files follow the same rules; no two files at one path; one kind per source', () => {
    const P = 'spec.volumes[0].projected';
    const items = [{ path: 'a', fieldRef: { fieldPath: 'metadata.name' } }];
    expect(
      problems(
        volume({
          projected: {
            sources: [{ downwardAPI: { items: [{ path: '../a', fieldRef: { fieldPath: 'metadata.name' } }] } }],
          },
        }),
      ),
    ).toEqual([`${P}.sources[0].downwardAPI.path: Invalid value: "../a": must not contain '..'`]);
    expect(
      problems(volume({ projected: { sources: [{ downwardAPI: { items } }, { downwardAPI: { items } }] } })),
    ).toEqual([`${P}: Invalid value: "a": conflicting duplicate paths`]);
    expect(
      problems(
        volume({
          projected: { defaultMode: 0o1000, sources: [{ downwardAPI: { items }, configMap: { name: 'cm' } }] },
        }),
        'api',
      ),
    ).toEqual([
      `${P}.defaultMode: Invalid value: 512: ${MODE_MSG}`,
      `${P}.sources[0]: Forbidden: may not specify more than 1 volume type per source`,
    ]);
  });
  it('configMap and secret items: a key, a path inside the volume, a mode in range', () => {
    const items = [{ key: '', path: '../../etc/cron.d/x', mode: 4095 }];
    expect(problems(volume({ configMap: { name: 'cm', items } }), 'api')).toEqual([
      'spec.volumes[0].configMap.items[0].key: Required value',
      `spec.volumes[0].configMap.items[0].path: Invalid value: "../../etc/cron.d/x": must not contain '..'`,
      `spec.volumes[0].configMap.items[0].mode: Invalid value: 4095: ${MODE_MSG}`,
    ]);
    expect(problems(volume({ secret: { items: [{ key: 'k', path: 'p' }] } }), 'api')).toEqual([
      'spec.volumes[0].secret.secretName: Required value',
    ]);
  });
});

describe('emptyDir and nfs', () => {
  it('an emptyDir sizeLimit is not negative', () => {
    expect(problems(volume({ emptyDir: { sizeLimit: '-1Gi' } }))).toEqual([
      'spec.volumes[0].emptyDir.sizeLimit: Forbidden: SizeLimit field must be a valid resource quantity',
    ]);
    expect(problems(volume({ emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } }))).toEqual([]);
  });
  it('an nfs path is absolute', () => {
    expect(problems(volume({ nfs: { server: 'nas', path: 'export' } }))).toEqual([
      'spec.volumes[0].nfs.path: Invalid value: "export": must be an absolute path',
    ]);
  });
});

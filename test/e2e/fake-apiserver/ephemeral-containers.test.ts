// The fake's pods/<name>/ephemeralcontainers as the real registry serves it: GET returns the pod, a
// strategic merge, JSON or merge patch and a PUT change only spec.ephemeralContainers, and the
// update rules hold (only additions; no ports, probes, resources or lifecycle; an existing target).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type Json } from '../../support/fake-apiserver/index.js';
import { TestClient } from './client.js';

let server: FakeApiServer;
let admin: TestClient;
const POD = '/api/v1/namespaces/default/pods/dbg';
const SUB = `${POD}/ephemeralcontainers`;
const SMP = 'application/strategic-merge-patch+json';

beforeAll(async () => {
  server = await startFakeApiServer();
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
  const created = await admin.post('/api/v1/namespaces/default/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'dbg' },
    spec: { containers: [{ name: 'app', image: 'busybox:1.36' }] },
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  admin?.close();
  await server?.dispose();
});

const ephemeral = (name: string, extra: Record<string, Json> = {}): Record<string, Json> => ({
  name,
  image: 'busybox:1.36',
  targetContainerName: 'app',
  stdin: true,
  ...extra,
});
type PodJson = {
  metadata: { resourceVersion?: string; labels?: Record<string, string> };
  spec: { ephemeralContainers?: Record<string, Json>[]; containers: Record<string, Json>[] };
};

describe('pods/ephemeralcontainers', () => {
  it('adds one with a strategic merge patch, as kubectl debug does; GET returns the pod; defaults are applied', async () => {
    const r = await admin.patch(SUB, { spec: { ephemeralContainers: [ephemeral('debugger-1')] } }, SMP);
    expect(r.status, r.text).toBe(200);
    expect(r.json.kind).toBe('Pod');
    const got = (await admin.get(SUB)).json as unknown as PodJson;
    expect(got.spec.ephemeralContainers).toEqual([
      {
        ...ephemeral('debugger-1'),
        imagePullPolicy: 'IfNotPresent',
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        resources: {},
      },
    ]);
  });

  it('changes nothing else of the pod', async () => {
    const r = await admin.patch(
      SUB,
      {
        metadata: { labels: { sneaky: 'yes' } },
        spec: {
          containers: [{ name: 'app', image: 'other:1' }],
          ephemeralContainers: [ephemeral('debugger-1'), ephemeral('debugger-2')],
        },
      },
      SMP,
    );
    expect(r.status, r.text).toBe(200);
    const pod = (await admin.get(POD)).json as unknown as PodJson;
    expect(pod.metadata.labels?.sneaky).toBeUndefined();
    expect(pod.spec.containers[0]?.image).toBe('busybox:1.36');
    expect(pod.spec.ephemeralContainers?.map((c) => c.name)).toEqual(['debugger-1', 'debugger-2']);
  });

  it('refuses to change or remove an existing one (PUT, JSON patch)', async () => {
    const current = (await admin.get(SUB)).json as unknown as PodJson;
    const removed = await admin.put(SUB, {
      ...current,
      spec: { ...current.spec, ephemeralContainers: [current.spec.ephemeralContainers![0]!] },
    } as unknown as Json);
    expect(removed.status).toBe(422);
    expect(removed.json.message).toMatch(/existing ephemeral containers "debugger-2" may not be removed/);
    const changed = await admin.patch(
      SUB,
      [{ op: 'replace', path: '/spec/ephemeralContainers/0/image', value: 'other:2' }],
      'application/json-patch+json',
    );
    expect(changed.status).toBe(422);
    expect(changed.json.message).toMatch(/existing ephemeral containers "debugger-1" may not be changed/);
  });

  it('refuses ports, probes, resources, lifecycle, a duplicate name and a missing target', async () => {
    const bad = [
      [
        ephemeral('p', { ports: [{ containerPort: 80 }] }),
        /ports: Forbidden: cannot be set for an Ephemeral Container/,
      ],
      [ephemeral('r', { readinessProbe: { exec: { command: ['true'] } } }), /readinessProbe: Forbidden/],
      [ephemeral('q', { resources: { limits: { cpu: '1' } } }), /resources: Forbidden/],
      [ephemeral('l', { lifecycle: { preStop: { exec: { command: ['true'] } } } }), /lifecycle: Forbidden/],
      [ephemeral('app'), /name: Duplicate value: "app"/],
      [ephemeral('t', { targetContainerName: 'nope' }), /targetContainerName: Not found: "nope"/],
    ] as const;
    for (const [c, why] of bad) {
      const r = await admin.patch(SUB, { spec: { ephemeralContainers: [c] } }, SMP);
      expect(r.status, JSON.stringify(c)).toBe(422);
      expect(r.json.message).toMatch(why);
    }
  });

  it('cannot be changed through the pod itself', async () => {
    const r = await admin.patch(POD, { spec: { ephemeralContainers: [ephemeral('debugger-3')] } }, SMP);
    expect(r.status).toBe(422);
  });
});

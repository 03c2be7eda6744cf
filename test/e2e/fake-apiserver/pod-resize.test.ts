// The fake's pods/<name>/resize as the real registry serves it: a patch changes only the containers'
// resources and resizePolicy and bumps metadata.generation; ValidatePodResize's refusals come in the
// API server's words; a resize of a pod whose running container reports no resources is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type Json } from '../../support/fake-apiserver/index.js';
import { TestClient } from './client.js';

let server: FakeApiServer;
let admin: TestClient;
const PODS = '/api/v1/namespaces/default/pods';
const SMP = 'application/strategic-merge-patch+json';

type PodJson = {
  metadata: { generation?: number; labels?: Record<string, string> };
  spec: { containers: { name: string; image: string; resources?: Json; resizePolicy?: Json }[] };
  status: { qosClass?: string };
};

const resources = (cpu: string, cpuLimit: string, memory = '64Mi'): Record<string, Json> => ({
  requests: { cpu, memory },
  limits: { cpu: cpuLimit, memory },
});

async function createPod(name: string, extra: Record<string, Json> = {}): Promise<void> {
  const r = await admin.post(PODS, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      initContainers: [{ name: 'init', image: 'busybox:1.36', resources: resources('10m', '10m') }],
      containers: [
        { name: 'app', image: 'busybox:1.36', resources: resources('100m', '200m') },
        { name: 'side', image: 'busybox:1.36' },
      ],
      ...extra,
    },
  });
  expect(r.status, r.text).toBe(201);
}

beforeAll(async () => {
  server = await startFakeApiServer();
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
  await createPod('rz');
});

afterAll(async () => {
  admin?.close();
  await server?.dispose();
});

describe('pods/resize', () => {
  it('takes only resources and resizePolicy, and bumps the generation', async () => {
    const r = await admin.patch(
      `${PODS}/rz/resize`,
      {
        metadata: { labels: { sneaky: 'yes' } },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'other:1',
              resources: resources('150m', '300m'),
              resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
            },
          ],
        },
      },
      SMP,
    );
    expect(r.status, r.text).toBe(200);
    const pod = (await admin.get(`${PODS}/rz`)).json as unknown as PodJson;
    expect(pod.metadata.generation).toBe(2);
    expect(pod.metadata.labels?.sneaky).toBeUndefined();
    expect(pod.spec.containers[0]).toMatchObject({
      image: 'busybox:1.36',
      resources: resources('150m', '300m'),
      resizePolicy: [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }],
    });
    // No default for a container that sets none: the kubelet reads a missing policy as NotRequired.
    expect(pod.spec.containers[1]?.resizePolicy).toBeUndefined();
  });

  it('refuses what ValidatePodResize refuses, in its words', async () => {
    const refused = async (containers: Json, initContainers?: Json): Promise<string> => {
      const r = await admin.patch(
        `${PODS}/rz/resize`,
        { spec: { containers, ...(initContainers ? { initContainers } : {}) } },
        SMP,
      );
      expect(r.status, r.text).toBe(422);
      return String(r.json.message);
    };
    expect(await refused([{ name: 'app', resources: { limits: { 'ephemeral-storage': '1Gi' } } }])).toContain(
      'spec: Forbidden: only cpu and memory resources are mutable',
    );
    expect(await refused([{ name: 'app', resources: { requests: { cpu: '400m' } } }])).toContain(
      'spec.containers[0].resources.requests: Invalid value: "400m": must be less than or equal to cpu limit of 300m',
    );
    expect(await refused([{ name: 'app', resources: { requests: { memory: null } } }])).toContain(
      'spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed',
    );
    expect(await refused([], [{ name: 'init', resources: resources('20m', '20m') }])).toContain(
      'spec.initContainers[0].resources: Forbidden: resources for non-sidecar init containers are immutable',
    );
    // BestEffort side container given requests: the pod stays Burstable; a lone one would not.
    await createPod('lone', {
      initContainers: null,
      containers: [{ name: 'c', image: 'busybox:1.36', resources: resources('100m', '200m') }],
    });
    const r = await admin.patch(
      `${PODS}/lone/resize`,
      { spec: { containers: [{ name: 'c', resources: resources('200m', '200m') }] } },
      SMP,
    );
    expect(r.status, r.text).toBe(422);
    expect(String(r.json.message)).toContain(
      'spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
    );
  });

  it('refuses a pod whose running container reports no resources (a node without resize)', async () => {
    await createPod('old-node');
    const pod = (await admin.get(`${PODS}/old-node`)).json;
    const status = {
      ...(pod as Record<string, Json>),
      status: {
        ...(pod as { status: Record<string, Json> }).status,
        containerStatuses: [
          { name: 'app', image: 'busybox:1.36', imageID: '', ready: true, restartCount: 0, state: { running: {} } },
        ],
      },
    };
    expect((await admin.put(`${PODS}/old-node/status`, status)).status).toBe(200);
    const r = await admin.patch(
      `${PODS}/old-node/resize`,
      { spec: { containers: [{ name: 'app', resources: resources('150m', '300m') }] } },
      SMP,
    );
    expect(r.status, r.text).toBe(422);
    expect(String(r.json.message)).toContain('spec: Forbidden: Pod running on node without support for resize');
  });
});

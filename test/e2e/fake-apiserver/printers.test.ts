// The STATUS / READY / RESTARTS cells of `kubectl get pods` as the server-side printer computes them.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer, type JsonObject } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { TestClient } from './client.js';
import { nodeObject } from './fixtures.js';
import { Kubectl } from './kubectl.js';

let server: FakeApiServer;
let dir: string;
let kubectl: Kubectl;
let admin: TestClient;

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-printers');
  server = await startFakeApiServer();
  kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
  admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
});

afterAll(async () => {
  admin?.close();
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

const ago = (s: number): string => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

async function podWithStatus(name: string, status: JsonObject, spec: JsonObject = {}): Promise<void> {
  const c = await admin.post('/api/v1/namespaces/default/pods', {
    metadata: { name },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }], ...spec },
  });
  expect(c.status, c.text).toBe(201);
  const s = await admin.patch(
    `/api/v1/namespaces/default/pods/${name}/status`,
    { status },
    'application/merge-patch+json',
  );
  expect(s.status, s.text).toBe(200);
}

describe('pod printer', () => {
  it('computes Running, CrashLoopBackOff with restarts, Completed, Init:0/1, Terminating', async () => {
    await podWithStatus('crash', {
      phase: 'Running',
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          restartCount: 3,
          image: 'i',
          imageID: '',
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s' } },
          lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: ago(200), finishedAt: ago(150) } },
        },
      ],
    });
    await podWithStatus('done', {
      phase: 'Succeeded',
      containerStatuses: [
        {
          name: 'c',
          ready: false,
          restartCount: 0,
          image: 'i',
          imageID: '',
          state: { terminated: { exitCode: 0, reason: 'Completed' } },
        },
      ],
    });
    await podWithStatus(
      'initing',
      {
        phase: 'Pending',
        initContainerStatuses: [
          {
            name: 'init',
            ready: false,
            restartCount: 0,
            image: 'i',
            imageID: '',
            state: { running: { startedAt: ago(1) } },
          },
        ],
        containerStatuses: [
          {
            name: 'c',
            ready: false,
            restartCount: 0,
            image: 'i',
            imageID: '',
            state: { waiting: { reason: 'PodInitializing' } },
          },
        ],
      },
      { initContainers: [{ name: 'init', image: 'i' }] },
    );
    await podWithStatus('going', {
      phase: 'Running',
      containerStatuses: [
        { name: 'c', ready: true, restartCount: 0, image: 'i', imageID: '', state: { running: { startedAt: ago(5) } } },
      ],
    });
    expect((await admin.delete('/api/v1/namespaces/default/pods/going')).status).toBe(200);

    const rows = new Map(
      (await kubectl.ok(['get', 'pods', '--no-headers']))
        .trim()
        .split('\n')
        .map((l) => l.split(/\s{2,}/))
        .map((cells) => [cells[0], cells.slice(1, 4)] as const),
    );
    expect(rows.get('crash')).toEqual(['0/1', 'CrashLoopBackOff', expect.stringMatching(/^3 \(2m3\ds ago\)$/)]);
    expect(rows.get('done')).toEqual(['0/1', 'Completed', '0']);
    expect(rows.get('initing')).toEqual(['0/1', 'Init:0/1', '0']);
    expect(rows.get('going')).toEqual(['1/1', 'Terminating', '0']);
  });

  it('node STATUS from the Ready condition, ROLES from node-role labels', async () => {
    const ready = nodeObject('cp1');
    (ready.metadata as JsonObject).labels = { 'node-role.kubernetes.io/control-plane': '' };
    expect((await admin.post('/api/v1/nodes', ready)).status).toBe(201);
    expect((await admin.post('/api/v1/nodes', nodeObject('w1', false))).status).toBe(201);
    const bare = await admin.post('/api/v1/nodes', { metadata: { name: 'fresh' } });
    expect(bare.status).toBe(201);
    const rows = (await kubectl.ok(['get', 'nodes', '--no-headers']))
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    expect(rows.map((r) => [r[0], r[1], r[2]])).toEqual([
      ['cp1', 'Ready', 'control-plane'],
      ['fresh', 'Unknown', '<none>'],
      ['w1', 'NotReady', '<none>'],
    ]);
  });
});

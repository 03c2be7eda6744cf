// The fake API server as real kubectl (Debian's 1.36) sees it: discovery, tables, -o json/yaml, delete that waits
// for the node to finish a graceful deletion, and watch output.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import { makeTmpDir, removeTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { TestClient } from './client.js';
import { mirrorPod, nodeObject, NODE_USER, runningStatus } from './fixtures.js';
import { Kubectl } from './kubectl.js';

let server: FakeApiServer;
let dir: string;
let kubectl: Kubectl;
let node: TestClient;
let nodeUid: string;

beforeAll(async () => {
  dir = makeTmpDir('fake-apiserver-kubectl');
  server = await startFakeApiServer();
  kubectl = new Kubectl(server.writeAdminKubeconfig(join(dir, 'admin.kubeconfig')), dir);
  const n = NODE_USER('n1');
  node = TestClient.forUser(server, n.user, n.groups);
  const created = await node.post('/api/v1/nodes', nodeObject('n1'));
  expect(created.status).toBe(201);
  nodeUid = String(created.json.metadata?.uid);
});

afterAll(async () => {
  node?.close();
  await server?.dispose();
  if (dir) removeTmpDir(dir);
});

async function createRunningMirror(name: string): Promise<string> {
  const r = await node.post('/api/v1/namespaces/kube-system/pods', mirrorPod(name, 'n1', nodeUid));
  expect(r.status, r.text).toBe(201);
  const podName = `${name}-n1`;
  const s = await node.patch(
    `/api/v1/namespaces/kube-system/pods/${podName}/status`,
    { metadata: { uid: r.json.metadata?.uid as string }, status: runningStatus(name) },
    'application/strategic-merge-patch+json',
  );
  expect(s.status, s.text).toBe(200);
  return podName;
}

describe('kubectl against the fake API server', () => {
  it('kubectl version shows the server version', async () => {
    const out = await kubectl.ok(['version']);
    expect(out).toMatch(/Server Version: v1\.32\.4/);
  });

  it('kubectl get nodes prints the columns and Ready status of a registered node', async () => {
    const out = await kubectl.ok(['get', 'nodes']);
    const [head, row] = out.trim().split('\n');
    expect(head.split(/\s+/)).toEqual(['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION']);
    expect(row.split(/\s+/)).toEqual(['n1', 'Ready', '<none>', expect.stringMatching(/^\d+s$/), 'v1.32.4']);
    const wide = await kubectl.ok(['get', 'nodes', '-o', 'wide']);
    expect(wide.split('\n')[0].split(/\s{2,}/)).toEqual([
      'NAME',
      'STATUS',
      'ROLES',
      'AGE',
      'VERSION',
      'INTERNAL-IP',
      'EXTERNAL-IP',
      'OS-IMAGE',
      'KERNEL-VERSION',
      'CONTAINER-RUNTIME',
    ]);
    expect(wide).toMatch(
      /n1\s+Ready\s+<none>\s+\S+\s+v1\.32\.4\s+10\.0\.0\.7\s+<none>\s+Debian GNU\/Linux 12 \(bookworm\)\s+6\.1\.0-test\s+containerd:\/\/1\.6\.20/,
    );
  });

  it('kubectl get pods -A -o json / -o wide and get pod -o yaml show a mirror pod', async () => {
    const pod = await createRunningMirror('etcd');
    const list = JSON.parse(await kubectl.ok(['get', 'pods', '-A', '-o', 'json'])) as {
      kind: string;
      items: { metadata: { name: string; annotations: Record<string, string> }; status: { phase: string } }[];
    };
    expect(list.kind).toBe('List');
    const item = list.items.find((i) => i.metadata.name === pod);
    expect(item?.status.phase).toBe('Running');
    expect(item?.metadata.annotations['kubernetes.io/config.mirror']).toBe('abc123');

    const wide = await kubectl.ok(['get', 'pods', '-A', '-o', 'wide']);
    const lines = wide.trim().split('\n');
    expect(lines[0].split(/\s{2,}/)).toEqual([
      'NAMESPACE',
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      'IP',
      'NODE',
      'NOMINATED NODE',
      'READINESS GATES',
    ]);
    expect(lines.find((l) => l.includes(pod))?.split(/\s+/)).toEqual([
      'kube-system',
      pod,
      '1/1',
      'Running',
      '0',
      expect.any(String),
      '10.0.0.7',
      'n1',
      '<none>',
      '<none>',
    ]);

    const yaml = await kubectl.ok(['get', 'pod', pod, '-n', 'kube-system', '-o', 'yaml']);
    expect(yaml).toMatch(/^apiVersion: v1\nkind: Pod\n/);
    expect(yaml).toContain(`name: ${pod}`);
    expect(yaml).toContain('kind: Node');
    expect(yaml).toContain(`uid: ${nodeUid}`);
    expect(yaml).toContain('priority: 2000001000');
    expect(yaml).toContain('qosClass: BestEffort');
  });

  it('kubectl delete pod waits until the node finishes the graceful deletion (grace 0, UID precondition)', async () => {
    const pod = await createRunningMirror('kube-scheduler');
    const watch = node.watch('/api/v1/pods?watch=1&fieldSelector=' + encodeURIComponent('spec.nodeName=n1'));
    let finished = false;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    // The simulated kubelet: on seeing a deletionTimestamp it stops the containers (here: waits to be
    // released) and finishes the deletion with grace 0 and a UID precondition.
    const kubelet = (async () => {
      const ev = await waitFor(
        () =>
          watch.events.find(
            (e) => e.type === 'MODIFIED' && e.object.metadata?.name === pod && e.object.metadata?.deletionTimestamp,
          ),
        { timeoutMs: 30_000, what: 'the deletionTimestamp to reach the node' },
      );
      await released;
      const r = await node.delete(`/api/v1/namespaces/kube-system/pods/${pod}`, {
        kind: 'DeleteOptions',
        apiVersion: 'v1',
        gracePeriodSeconds: 0,
        preconditions: { uid: ev.object.metadata?.uid as string },
      });
      expect(r.status, r.text).toBe(200);
      finished = true;
    })();
    try {
      const deleting = kubectl.ok(['delete', 'pod', pod, '-n', 'kube-system', '--timeout=60s']);
      await waitFor(() => server.object('pods', 'kube-system', pod)?.metadata.deletionTimestamp, {
        timeoutMs: 30_000,
        what: 'the graceful deletion to start',
      });
      expect(await kubectl.ok(['get', 'pod', pod, '-n', 'kube-system', '--no-headers'])).toMatch(
        new RegExp(`^${pod}\\s+1/1\\s+Terminating\\s`),
      );
      expect(finished).toBe(false);
      release();
      const out = await deleting;
      expect(out.trim()).toBe(`pod "${pod}" deleted from kube-system namespace`);
      await kubelet;
      expect(finished).toBe(true);
      expect(server.object('pods', 'kube-system', pod)).toBeUndefined();
      await waitFor(() => watch.events.some((e) => e.type === 'DELETED' && e.object.metadata?.name === pod), {
        timeoutMs: 10_000,
        what: 'DELETED on the node watch',
      });
      const del = server.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${pod}`));
      expect(del.map((r) => [r.user, r.status])).toEqual([
        ['system:admin', 200],
        ['system:node:n1', 200],
      ]);
    } finally {
      release();
      watch.close();
      await kubelet.catch(() => undefined);
    }
  });

  it('kubectl get pods -w prints changes as they happen', async () => {
    const running = kubectl.start(['get', 'pods', '-n', 'default', '-w']);
    try {
      await waitFor(
        () =>
          server.requests.some((r) => r.path === '/api/v1/namespaces/default/pods' && r.query.includes('watch=true')),
        {
          timeoutMs: 30_000,
          what: 'kubectl to open its watch',
        },
      );
      const admin = TestClient.forUser(server, 'system:admin', ['system:masters']);
      try {
        const r = await admin.post('/api/v1/namespaces/default/pods', {
          metadata: { name: 'web' },
          spec: { containers: [{ name: 'c', image: 'nginx:1.27' }] },
        });
        expect(r.status, r.text).toBe(201);
        await waitFor(() => /web\s+0\/1\s+Pending/.test(running.stdout), {
          timeoutMs: 20_000,
          what: 'the Pending row',
        });
        const p = await admin.patch(
          '/api/v1/namespaces/default/pods/web/status',
          { status: runningStatus('c') },
          'application/merge-patch+json',
        );
        expect(p.status, p.text).toBe(200);
        await waitFor(() => /web\s+1\/1\s+Running/.test(running.stdout), {
          timeoutMs: 20_000,
          what: 'the Running row',
        });
        const d = await admin.delete('/api/v1/namespaces/default/pods/web');
        expect(d.status).toBe(200);
      } finally {
        admin.close();
      }
      // Unbound pod: deleted at once; kubectl -w prints the last state once more.
      await waitFor(
        () =>
          running.stdout
            .trim()
            .split('\n')
            .filter((l) => l.startsWith('web')).length >= 3,
        { timeoutMs: 20_000, what: 'the deletion row' },
      );
      expect(running.stdout.split('\n')[0].split(/\s+/)).toEqual(['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
    } finally {
      await running.stop();
    }
  });

  it('accepts kubeconfigs with file paths and with bearer tokens', async () => {
    const byPath = new Kubectl(server.writeAdminKubeconfig(join(dir, 'paths.kubeconfig'), { embed: false }), dir);
    expect(await byPath.ok(['get', 'ns', 'default', '-o', 'name'])).toBe('namespace/default\n');
    const byToken = new Kubectl(
      server.writeAdminKubeconfig(join(dir, 'token.kubeconfig'), { token: 'admin-token-1' }),
      dir,
    );
    expect(await byToken.ok(['get', 'ns', 'kube-system', '-o', 'name'])).toBe('namespace/kube-system\n');
    const nodeCfg = new Kubectl(
      server.writeKubeconfig(join(dir, 'node.kubeconfig'), 'system:node:n1', ['system:nodes']),
      dir,
    );
    const denied = await nodeCfg.run(['get', 'namespaces']);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      'namespaces is forbidden: User "system:node:n1" cannot list resource "namespaces" in API group "" at the cluster scope',
    );
  });
});

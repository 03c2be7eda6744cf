// staticPodURL as the kubelet reads it: a Pod or a PodList, the headers, identity from the URL,
// and the file source's rules: a broken answer or an unreachable server keeps the pods, one log
// line per outage.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeHttpPodUid } from '../../../src/config/identity.js';
import { startHttpSource, type HttpSource } from '../../../src/config/http-source.js';
import { applySchemeDefaults } from '../../../src/k8s/defaults.js';
import { decodeManifest } from '../../../src/config/decode/decode-manifest.js';
import type { PodUpdate } from '../../../src/config/types.js';
import { memoryLogger } from '../../../src/log/logger.js';

let answer: { status: number; body: string | Buffer; hang?: boolean } = { status: 200, body: '' };
const seenHeaders: http.IncomingHttpHeaders[] = [];
let server: http.Server;
let base = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seenHeaders.push(req.headers);
    if (answer.hang) return; // never answers
    res.writeHead(answer.status, { 'Content-Type': 'application/yaml' }).end(answer.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const POD = (name: string, image = 'busybox') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: kube-system}
spec:
  hostNetwork: true
  containers: [{name: main, image: ${image}}]
`;
const LIST = (...pods: string[]) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'PodList',
    items: pods.map((p) => decodeManifest(p)).map((d) => (d.ok ? d.pod : {})),
  });

function source(path: string, node = 'node1', extra: { timeoutMs?: number; maxBytes?: number } = {}) {
  const updates: PodUpdate[] = [];
  const { logger, lines } = memoryLogger();
  let ready = 0;
  const s: HttpSource = startHttpSource({
    url: `${base}${path}`,
    headers: { 'X-Token': ['abc'], Accept: ['application/yaml', 'application/json'] },
    nodeName: node,
    checkFrequencyMs: 3_600_000,
    logger,
    events: { update: (u) => updates.push(u), error: () => {}, warning: () => {}, ready: () => ready++ },
    ...extra,
  });
  return { s, updates, lines, ready: () => ready };
}

describe('the staticPodURL source', () => {
  it('runs a Pod with the kubelet identity: UID from content and URL, config.source http, no toleration, sent headers', async () => {
    answer = { status: 200, body: POD('web') };
    const a = source('/pods');
    const b = source('/pods', 'node2');
    await a.s.poll();
    await b.s.poll();
    const pod = a.updates[0]!;
    expect(pod.op).toBe('ADD');
    expect(pod.pod.key).toBe('kube-system/web-node1');
    expect(pod.pod.pod.metadata.annotations['kubernetes.io/config.source']).toBe('http');
    expect(pod.pod.pod.spec?.tolerations).toBeUndefined();
    const decoded = decodeManifest(POD('web'));
    expect(pod.pod.uid).toBe(computeHttpPodUid(applySchemeDefaults(decoded.ok ? decoded.pod : {}), `${base}/pods`));
    // No node name in the UID: the same URL gives the same UID on every node.
    expect(b.updates[0]!.pod.uid).toBe(pod.pod.uid);
    expect(a.ready()).toBe(1);
    expect(seenHeaders.at(-1)?.['x-token']).toBe('abc');
    expect(seenHeaders.at(-1)?.accept).toBe('application/yaml, application/json');
    await a.s.stop();
    await b.s.stop();
  });

  it('runs the items of a PodList, and turns a changed answer into ADD, UPDATE and REMOVE by name', async () => {
    answer = { status: 200, body: LIST(POD('a'), POD('b')) };
    const { s, updates } = source('/list');
    await s.poll();
    expect(updates.map((u) => `${u.op} ${u.pod.key}`)).toEqual(['ADD kube-system/a-node1', 'ADD kube-system/b-node1']);
    await s.poll();
    expect(updates).toHaveLength(2); // same bytes: nothing
    answer = { status: 200, body: LIST(POD('b', 'busybox:2'), POD('c')) };
    await s.poll();
    expect(updates.slice(2).map((u) => `${u.op} ${u.pod.key}`)).toEqual([
      'REMOVE kube-system/a-node1',
      'UPDATE kube-system/b-node1',
      'ADD kube-system/c-node1',
    ]);
    await s.stop();
  });

  it('keeps every pod through an outage and broken answers, saying so once per outage', async () => {
    answer = { status: 200, body: POD('keep') };
    const { s, updates, lines } = source('/flaky', 'node1', { timeoutMs: 300, maxBytes: 4096 });
    await s.poll();
    for (const broken of [
      { status: 500, body: 'oops' },
      { status: 404, body: '' },
      { status: 200, body: '', hang: true },
    ]) {
      answer = broken;
      await s.poll();
      await s.poll();
    }
    expect(lines.filter((l) => l.includes('Cannot read static pods from staticPodURL'))).toHaveLength(1);
    answer = { status: 200, body: 'kind: Pod\napiVersion: v1\nmetadata: [' };
    await s.poll();
    expect(lines.some((l) => l.includes('staticPodURL answers again'))).toBe(true);
    answer = { status: 200, body: '' };
    await s.poll();
    answer = { status: 200, body: 'x'.repeat(5000) };
    await s.poll();
    expect(lines.filter((l) => l.includes('Static pods from staticPodURL refused')).length).toBe(2);
    expect(lines.filter((l) => l.includes('refused')).some((l) => l.includes('the answer is empty'))).toBe(true);
    expect(lines.some((l) => l.includes('larger than'))).toBe(true);
    expect(updates.map((u) => u.op)).toEqual(['ADD']);
    await s.stop();
  });

  it('uses the first of two pods with one name and says so', async () => {
    answer = { status: 200, body: LIST(POD('dup'), POD('dup', 'busybox:other')) };
    const { s, updates, lines } = source('/dup');
    await s.poll();
    expect(updates).toHaveLength(1);
    expect(updates[0]!.pod.pod.spec?.containers[0]?.image).toBe('busybox');
    expect(lines.some((l) => l.includes('Two pods of the staticPodURL answer have one name'))).toBe(true);
    await s.stop();
  });

  it('refuses a whole list when one item is not a valid pod, keeping what ran', async () => {
    answer = { status: 200, body: LIST(POD('x')) };
    const { s, updates, lines } = source('/bad-item');
    await s.poll();
    answer = {
      status: 200,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'PodList',
        items: [{ metadata: { name: 'y' }, spec: { containers: [{ name: 'c' }] } }],
      }),
    };
    await s.poll();
    expect(updates.map((u) => u.op)).toEqual(['ADD']);
    expect(lines.some((l) => l.includes('items[0]'))).toBe(true);
    await s.stop();
  });
});

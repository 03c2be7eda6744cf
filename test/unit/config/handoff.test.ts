// What config tells the pod workers for a safe handoff with a kubelet: which refused files declare
// which pods (so that a running pod is not stopped for a manifest bootlet refuses), and the alias by
// which a desired pod takes the UID of the pod a kubelet already runs from the same content.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFileSource, type FileSource } from '../../../src/config/file-source';
import type { ManifestClaim, PodUpdate } from '../../../src/config/types';
import { memoryLogger } from '../../../src/log/logger';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { waitFor } from '../../support/wait';
import { podYaml } from './helpers';

const base = makeTmpDir('config-handoff');
afterAll(() => removeTmpDir(base));
let dirs = 0;
const newDir = (): string => {
  const d = join(base, `d${++dirs}`);
  mkdirSync(d);
  return d;
};

const running: FileSource[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function start(dir: string) {
  const seen = {
    updates: [] as PodUpdate[],
    claims: [] as Array<readonly ManifestClaim[]>,
    readyAfterClaims: -1,
    ready: false,
  };
  const { logger, lines } = memoryLogger(2);
  const src = startFileSource({
    path: dir,
    nodeName: 'node-a',
    fileCheckFrequencyMs: 60_000,
    logger,
    events: {
      update: (u) => seen.updates.push(u),
      error: () => {},
      warning: () => {},
      refusedClaims: (c) => seen.claims.push(c),
      ready: () => {
        seen.ready = true;
        seen.readyAfterClaims = seen.claims.length;
      },
    },
  });
  running.push(src);
  return { seen, src, lines };
}
const WAIT = { timeoutMs: 15_000, intervalMs: 20 };
const lastClaims = (seen: { claims: Array<readonly ManifestClaim[]> }) => seen.claims.at(-1) ?? [];

describe('refused claims', () => {
  it('names the pod a refused file declares when it can be read, and says "unknown" when it cannot', async () => {
    const dir = newDir();
    // Parses, but refused by validation: the suffixed key of metadata.name/namespace.
    writeFileSync(
      join(dir, 'etcd.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\nspec:\n  containers:\n  - name: etcd\n',
    );
    // Parses, does not decode (containers is not a list): still named.
    writeFileSync(
      join(dir, 'api.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: kube-apiserver, namespace: kube-system}\nspec: {containers: 5}\n',
    );
    // No namespace: the static pod default.
    writeFileSync(
      join(dir, 'web.yaml'),
      'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c}]}\n',
    );
    // Does not parse: could be any pod's.
    writeFileSync(join(dir, 'broken.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   oops: 1\n');
    writeFileSync(join(dir, 'good.yaml'), podYaml('good'));
    const { seen } = start(dir);
    await waitFor(() => seen.ready, { ...WAIT, what: 'ready' });
    // Told once, and before ready(): the pod workers know the claims when they first read the runtime.
    expect(seen.claims).toHaveLength(1);
    expect(seen.readyAfterClaims).toBe(1);
    expect(lastClaims(seen).map((c) => [c.file.slice(dir.length + 1), c.podKey])).toEqual([
      ['api.yaml', 'kube-system/kube-apiserver-node-a'],
      ['broken.yaml', undefined],
      ['etcd.yaml', 'kube-system/etcd-node-a'],
      ['web.yaml', 'default/web-node-a'],
    ]);
    expect(lastClaims(seen).every((c) => c.message.length > 0)).toBe(true);
    expect(seen.updates.map((u) => `${u.op} ${u.pod.key}`)).toEqual(['ADD default/good-node-a']);

    // The broken file goes, one is fixed: each change is told, the fixed file's pod arrives.
    rmSync(join(dir, 'broken.yaml'));
    await waitFor(() => lastClaims(seen).length === 3, { ...WAIT, what: 'claims without broken.yaml' });
    writeFileSync(join(dir, 'web.yaml'), podYaml('web'));
    await waitFor(() => lastClaims(seen).length === 2 && seen.updates.length === 2, {
      ...WAIT,
      what: 'web.yaml accepted',
    });
    expect(seen.updates[1]).toMatchObject({ op: 'ADD', pod: { key: 'default/web-node-a' } });
    expect(lastClaims(seen).map((c) => c.podKey)).toEqual([
      'kube-system/kube-apiserver-node-a',
      'kube-system/etcd-node-a',
    ]);
  });

  it('a file that loses a key to another is a claim on that key while it loses', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'a.yaml'), podYaml('web', 'busybox:a'));
    writeFileSync(join(dir, 'b.yaml'), podYaml('web', 'busybox:b'));
    const { seen } = start(dir);
    await waitFor(() => seen.ready, { ...WAIT, what: 'ready' });
    expect(lastClaims(seen)).toEqual([
      {
        file: join(dir, 'b.yaml'),
        podKey: 'default/web-node-a',
        message: expect.stringContaining('already declared by'),
      },
    ]);
    writeFileSync(join(dir, 'b.yaml'), podYaml('other', 'busybox:b'));
    await waitFor(() => lastClaims(seen).length === 0, { ...WAIT, what: 'no claims once b.yaml declares another pod' });
  });
});

describe('FileSource.adoptIdentity', () => {
  it('re-emits the pod under the running pod’s UID, for exactly that content only', async () => {
    const dir = newDir();
    const file = join(dir, 'etcd.yaml');
    writeFileSync(file, podYaml('etcd'));
    const { seen, src } = start(dir);
    await waitFor(() => seen.ready, { ...WAIT, what: 'ready' });
    const computed = seen.updates[0]!.pod.uid;
    const KUBELET_UID = '3c4f0a1e9b2d47c68e5f1a2b3c4d5e6f';

    // Nothing changes for a wrong computed UID, an unusable UID, or another file.
    expect(src.adoptIdentity(file, 'not-the-uid', KUBELET_UID)).toBe(false);
    expect(src.adoptIdentity(file, computed, '../../etc')).toBe(false);
    expect(src.adoptIdentity(join(dir, 'other.yaml'), computed, KUBELET_UID)).toBe(false);
    expect(seen.updates).toHaveLength(1);

    expect(src.adoptIdentity(file, computed, KUBELET_UID)).toBe(true);
    // Emitted before adoptIdentity returned.
    expect(seen.updates).toHaveLength(2);
    const up = seen.updates[1]!;
    expect(up.op).toBe('UPDATE');
    if (up.op !== 'UPDATE') return;
    expect(up.previous.uid).toBe(computed);
    expect(up.pod).toMatchObject({ uid: KUBELET_UID, computedUid: computed, key: 'default/etcd-node-a', file });
    expect(up.pod.pod.metadata.uid).toBe(KUBELET_UID);
    expect(up.pod.pod.metadata.annotations['kubernetes.io/config.hash']).toBe(KUBELET_UID);
    expect(src.adoptIdentity(file, computed, KUBELET_UID)).toBe(false); // already done

    // The same content read again (a cosmetic rewrite, a rescan) keeps the adopted UID.
    writeFileSync(file, `# a comment\n${podYaml('etcd')}`);
    await src.rescan();
    expect(seen.updates).toHaveLength(2);

    // Any real edit gets a fresh UID and replaces the adopted pod as usual; so does going back.
    writeFileSync(file, podYaml('etcd', 'busybox:2'));
    await waitFor(() => seen.updates.length === 3, { ...WAIT, what: 'the edit' });
    const edit = seen.updates[2]!;
    expect(edit.op === 'UPDATE' && [edit.previous.uid, edit.pod.computedUid]).toEqual([KUBELET_UID, undefined]);
    expect(edit.pod.uid).not.toBe(computed);
    writeFileSync(file, podYaml('etcd'));
    await waitFor(() => seen.updates.length === 4, { ...WAIT, what: 'the revert' });
    expect(seen.updates[3]!.pod.uid).toBe(computed);
  });

  it('refuses a UID another desired pod already has', async () => {
    const dir = newDir();
    const pinned = '11111111-2222-3333-4444-555555555555';
    writeFileSync(join(dir, 'a.yaml'), podYaml('a').replace('name: a\n', `name: a\n  uid: ${pinned}\n`));
    writeFileSync(join(dir, 'b.yaml'), podYaml('b'));
    const { seen, src } = start(dir);
    await waitFor(() => seen.ready, { ...WAIT, what: 'ready' });
    const b = seen.updates.find((u) => u.pod.key === 'default/b-node-a')!.pod;
    expect(src.adoptIdentity(b.file, b.uid, pinned)).toBe(false);
    expect(seen.updates).toHaveLength(2);
  });
});

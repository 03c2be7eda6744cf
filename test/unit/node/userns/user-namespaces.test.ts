// The pods' user namespaces (the kubelet's UsernsManager): one block of idsPerPod IDs (65536 by
// default) per pod, never two
// pods on one block, each kept in the pod's `userns` file in the kubelet's format and read back
// by a new agent, released with the pod.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/log/logger.js';
import type { NodeIdRange } from '../../../../src/node/userns/node-id-range.js';
import { parseUserNamespaceFile, UserNamespaceManager } from '../../../../src/node/userns/user-namespaces.js';
import { useTmpDir } from '../../../support/tmp.js';

const tmp = useTmpDir('userns-manager');
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
let n = 0;
const BLOCK = 65536;

function manager(rootDir: string, range: NodeIdRange = { firstId: BLOCK, length: BLOCK * 2000 }) {
  return new UserNamespaceManager({ rootDir, range: () => Promise.resolve(range), logger });
}
const freshRoot = (): string => path.join(tmp, `root-${n++}`);
const uidOf = (i: number): string => `pod-${String(i).padStart(4, '0')}`;
const fileOf = (root: string, uid: string): string => path.join(root, 'pods', uid, 'userns');

describe('user namespace manager', () => {
  it('gives each pod its own block, the same for UIDs and GIDs, container 0 at its start', async () => {
    const root = freshRoot();
    const m = manager(root);
    const got = await Promise.all(Array.from({ length: 300 }, (_, i) => m.getOrCreate(uidOf(i))));
    const starts = got.map((u) => u.uidMappings[0]!.hostId);
    expect(new Set(starts).size).toBe(300);
    for (const u of got) {
      expect(u.uidMappings).toEqual(u.gidMappings);
      expect(u.uidMappings[0]).toMatchObject({ containerId: 0, length: BLOCK });
      expect(u.uidMappings[0]!.hostId % BLOCK).toBe(0);
      expect(u.uidMappings[0]!.hostId).toBeGreaterThanOrEqual(BLOCK);
      expect(u.uidMappings[0]!.hostId + BLOCK).toBeLessThanOrEqual(BLOCK + BLOCK * 2000);
    }
  });

  it("writes the kubelet's userns file, which a new agent reads back before it gives out a block", async () => {
    const root = freshRoot();
    const first = await manager(root).getOrCreate(uidOf(1));
    const text = fs.readFileSync(fileOf(root, uidOf(1)), 'utf8');
    expect(JSON.parse(text)).toEqual({
      uidMappings: [{ hostId: first.uidMappings[0]!.hostId, containerId: 0, length: BLOCK }],
      gidMappings: [{ hostId: first.uidMappings[0]!.hostId, containerId: 0, length: BLOCK }],
    });
    // A range of two blocks: the restarted agent must give the other one to a new pod.
    const two = { firstId: first.uidMappings[0]!.hostId, length: BLOCK * 2 };
    const restarted = manager(root, two);
    const other = await restarted.getOrCreate(uidOf(2));
    expect(other.uidMappings[0]!.hostId).toBe(two.firstId + BLOCK);
    expect(await restarted.getOrCreate(uidOf(1))).toEqual(first);
    await expect(restarted.getOrCreate(uidOf(3))).rejects.toThrow(
      'create user namespace: could not find an empty slot to allocate a user namespace',
    );
  });

  it("reads back a kubelet's file (a node taken over) and keeps its block for that pod", async () => {
    const root = freshRoot();
    fs.mkdirSync(path.join(root, 'pods', 'from-kubelet'), { recursive: true });
    const hostId = BLOCK * 7;
    fs.writeFileSync(
      fileOf(root, 'from-kubelet'),
      `{"uidMappings":[{"hostId":${hostId},"containerId":0,"length":65536}],"gidMappings":[{"hostId":${hostId},"containerId":0,"length":65536}]}`,
    );
    const m = manager(root, { firstId: BLOCK * 7, length: BLOCK * 2 });
    const other = await m.getOrCreate('new-pod');
    expect(other.uidMappings[0]!.hostId).toBe(BLOCK * 8);
    expect((await m.getOrCreate('from-kubelet')).uidMappings[0]!.hostId).toBe(hostId);
  });

  it('one block for a pod asked for twice at once', async () => {
    const m = manager(freshRoot());
    const [a, b] = await Promise.all([m.getOrCreate('twice'), m.getOrCreate('twice')]);
    expect(a).toEqual(b);
    expect(m.held().size).toBe(1);
  });

  it('frees the block with the pod, for the next pod', async () => {
    const root = freshRoot();
    const m = manager(root, { firstId: BLOCK, length: BLOCK });
    const a = await m.getOrCreate('a');
    await expect(m.getOrCreate('b')).rejects.toThrow('could not find an empty slot');
    await m.release('a');
    expect(fs.existsSync(fileOf(root, 'a'))).toBe(false);
    expect((await m.getOrCreate('b')).uidMappings[0]!.hostId).toBe(a.uidMappings[0]!.hostId);
  });

  it('fails every pod with the reason when the node has no usable range', async () => {
    const m = new UserNamespaceManager({
      rootDir: freshRoot(),
      range: () => Promise.reject(new Error('mismatched subuids and subgids for user "kubelet"')),
      logger,
    });
    await expect(m.getOrCreate('a')).rejects.toThrow('mismatched subuids and subgids for user "kubelet"');
  });

  const invalid: [string, string][] = [
    ['not JSON', 'invalid user namespace mappings file'],
    ['{"uidMappings":[],"gidMappings":[]}', 'invalid user namespace configuration: no more than one mapping allowed.'],
    [
      '{"uidMappings":[{"hostId":65536,"containerId":0,"length":65536}],"gidMappings":[{"hostId":131072,"containerId":0,"length":65536}]}',
      'invalid user namespace configuration: GID and UID mapping should be identical',
    ],
    [
      '{"uidMappings":[{"hostId":65536,"containerId":1,"length":65536}],"gidMappings":[{"hostId":65536,"containerId":1,"length":65536}]}',
      'invalid user namespace configuration: UID 0 must be mapped',
    ],
  ];
  it.each(invalid)('refuses a userns file %s', (content, message) => {
    expect(() => parseUserNamespaceFile(content)).toThrow(message);
  });

  it("a pod whose file is damaged fails with the kubelet's words, and no other pod gets a block from it", async () => {
    const root = freshRoot();
    fs.mkdirSync(path.join(root, 'pods', 'damaged'), { recursive: true });
    fs.writeFileSync(
      fileOf(root, 'damaged'),
      '{"uidMappings":[{"hostId":65537,"containerId":0,"length":65536}],"gidMappings":[{"hostId":65537,"containerId":0,"length":65536}]}',
    );
    await expect(manager(root).getOrCreate('damaged')).rejects.toThrow(
      'user namespace: wrong user namespace offset specified 65537',
    );
  });

  describe('with userNamespaces.idsPerPod set', () => {
    const IDS = BLOCK * 4;
    const seen: number[] = [];
    const custom = (rootDir: string, range: NodeIdRange = { firstId: IDS, length: IDS * 300 }) =>
      new UserNamespaceManager({
        rootDir,
        idsPerPod: IDS,
        range: (idsPerPod) => {
          seen.push(idsPerPod);
          return Promise.resolve(range);
        },
        logger,
      });

    it('reads the node range in blocks of idsPerPod and gives each pod one such block, at a multiple of it', async () => {
      const root = freshRoot();
      const m = custom(root);
      const got = await Promise.all(Array.from({ length: 300 }, (_, i) => m.getOrCreate(uidOf(i))));
      expect(seen).toEqual([IDS]);
      const starts = got.map((u) => u.uidMappings[0]!.hostId);
      expect(new Set(starts).size).toBe(300);
      for (const u of got) {
        expect(u.uidMappings[0]).toMatchObject({ containerId: 0, length: IDS });
        expect(u.uidMappings[0]!.hostId % IDS).toBe(0);
        expect(u.uidMappings[0]!.hostId).toBeGreaterThanOrEqual(IDS);
        expect(u.uidMappings[0]!.hostId + IDS).toBeLessThanOrEqual(IDS + IDS * 300);
      }
      // The file keeps the kubelet's format, with the configured length.
      expect(JSON.parse(fs.readFileSync(fileOf(root, uidOf(0)), 'utf8'))).toEqual({
        uidMappings: [{ hostId: starts[0], containerId: 0, length: IDS }],
        gidMappings: [{ hostId: starts[0], containerId: 0, length: IDS }],
      });
      await expect(m.getOrCreate(uidOf(300))).rejects.toThrow('could not find an empty slot');
    });

    it("refuses a pod's file of another length (written with another idsPerPod) in the kubelet's words", async () => {
      const root = freshRoot();
      fs.mkdirSync(path.join(root, 'pods', 'old'), { recursive: true });
      fs.writeFileSync(
        fileOf(root, 'old'),
        `{"uidMappings":[{"hostId":${IDS},"containerId":0,"length":65536}],"gidMappings":[{"hostId":${IDS},"containerId":0,"length":65536}]}`,
      );
      const m = custom(root, { firstId: IDS, length: IDS });
      await expect(m.getOrCreate('old')).rejects.toThrow('user namespace: wrong user namespace length 65536');
      // Its block was not taken from the range: the one block goes to a new pod.
      expect((await m.getOrCreate('new')).uidMappings[0]).toEqual({ hostId: IDS, containerId: 0, length: IDS });
    });
  });
});

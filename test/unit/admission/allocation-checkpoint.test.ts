// The allocation checkpoint as the kubelet writes it: a checkpoint from the kubelet's own tests
// (state_checkpoint_test.go) is read and its checksum agrees; what bootlet writes reads back, a
// restarted PodAllocations runs a pod with what was allocated, and a corrupted file is refused.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AllocationCheckpoint,
  checkpointChecksum,
  decodeCheckpoint,
  encodeCheckpoint,
} from '../../../src/admission/allocation-checkpoint.js';
import { PodAllocations } from '../../../src/admission/pod-allocations.js';
import type { DefaultedPod } from '../../../src/k8s/pod.js';
import { nullLogger } from '../../../src/log/logger.js';

/** Written by the kubelet (Test_stateCheckpoint_formatUpgraded). */
const KUBELET_CHECKPOINT = String.raw`{"data":"{\"entries\":{\"pod1\":{\"ContainerResources\":{\"container1\":{\"requests\":{\"cpu\":\"1Ki\",\"memory\":\"1Ki\"}}}}}}","checksum":1178570812}`;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function pod(uid: string, cpu: string): DefaultedPod {
  return {
    metadata: { name: 'p', namespace: 'default', uid, annotations: {} },
    spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu } } }] },
  };
}

describe('allocation checkpoint', () => {
  it("reads the kubelet's checkpoint, with the kubelet's checksum", () => {
    const data = (JSON.parse(KUBELET_CHECKPOINT) as { data: string }).data;
    expect(checkpointChecksum(data)).toBe(1178570812);
    expect(decodeCheckpoint(KUBELET_CHECKPOINT)).toEqual(
      new Map([['pod1', { container1: { requests: { cpu: '1Ki', memory: '1Ki' } } }]]),
    );
  });

  it('writes what it reads back, and refuses a checksum that does not match', () => {
    const all = new Map([['u1', { c: { requests: { cpu: '150m' }, limits: { cpu: '300m', memory: '96Mi' } } }]]);
    const text = encodeCheckpoint(all);
    expect(decodeCheckpoint(text)).toEqual(all);
    const cp = JSON.parse(text) as { data: string; checksum: number };
    expect(() => decodeCheckpoint(JSON.stringify({ ...cp, checksum: cp.checksum + 1 }))).toThrow(/corrupted/);
  });

  it('a restarted agent runs a resized pod with its allocation, not its spec; a corrupted file is ignored', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'alloc-'));
    dirs.push(dir);
    const first = new PodAllocations(new AllocationCheckpoint(dir, nullLogger));
    await first.restore();
    await first.allocate(pod('u1', '100m'));
    const again = new PodAllocations(new AllocationCheckpoint(dir, nullLogger));
    await again.restore();
    const desired = pod('u1', '900m');
    expect(again.differs(desired)).toBe(true);
    expect(again.allocatedPod(desired).spec?.containers[0]?.resources?.requests?.cpu).toBe('100m');
    expect(readFileSync(path.join(dir, 'allocated_pods_state'), 'utf8')).toContain('ContainerResources');
    writeFileSync(path.join(dir, 'allocated_pods_state'), '{"data":"{}","checksum":1}');
    const corrupted = new PodAllocations(new AllocationCheckpoint(dir, nullLogger));
    await corrupted.restore();
    expect(corrupted.has('u1')).toBe(false);
  });
});

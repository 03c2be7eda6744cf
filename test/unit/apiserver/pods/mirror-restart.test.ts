import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { buildMirrorPod } from '../../../../src/apiserver/pods/mirror-pod.js';
import { MirrorRestartRequests, restartRequestOf } from '../../../../src/apiserver/pods/mirror-restart.js';
import { CONFIG_MIRROR, RESTARTED_AT } from '../../../../src/k8s/annotations.js';
import { staticPod } from '../../../e2e/apiserver/fakes.js';

const sp = staticPod('etcd', 'n1');

function mirror(value: string | undefined, o: { node?: string; hash?: string; deleting?: boolean } = {}): Pod {
  const m = buildMirrorPod(sp, o.node ?? 'n1', 'node-uid');
  const annotations = {
    ...m.metadata?.annotations,
    ...(o.hash !== undefined ? { [CONFIG_MIRROR]: o.hash } : {}),
    ...(value !== undefined ? { [RESTARTED_AT]: value } : {}),
  };
  return {
    ...m,
    metadata: { ...m.metadata, annotations, ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  };
}

describe('restartRequestOf', () => {
  it('reads restartedAt from a current mirror of the static pod on this node', () => {
    expect(restartRequestOf(mirror('v1'), sp, 'n1')).toBe('v1');
  });

  it('asks nothing without the annotation, or with an empty value', () => {
    expect(restartRequestOf(mirror(undefined), sp, 'n1')).toBeUndefined();
    expect(restartRequestOf(mirror(''), sp, 'n1')).toBeUndefined();
  });

  it("ignores a mirror that is not ours: an older manifest's hash, another node, being deleted, no static pod", () => {
    expect(restartRequestOf(mirror('v1', { hash: 'stale-hash' }), sp, 'n1')).toBeUndefined();
    expect(restartRequestOf(mirror('v1', { node: 'n2' }), sp, 'n1')).toBeUndefined();
    expect(restartRequestOf(mirror('v1', { deleting: true }), sp, 'n1')).toBeUndefined();
    expect(restartRequestOf(mirror('v1'), undefined, 'n1')).toBeUndefined();
    expect(restartRequestOf(mirror('v1'), staticPod('etcd', 'n1', { image: 'other:1' }), 'n1')).toBeUndefined();
  });
});

describe('MirrorRestartRequests', () => {
  function setup() {
    const told: [string, string][] = [];
    const mirrors = new Map<string, Pod>();
    const desired = new Map([[sp.key, sp]]);
    const r = new MirrorRestartRequests(
      (k) => mirrors.get(k),
      (k) => desired.get(k),
      'n1',
      (uid, v) => told.push([uid, v]),
    );
    return { told, mirrors, desired, r };
  }

  it('tells a new value once, a changed value again, the same value never twice', () => {
    const { told, mirrors, r } = setup();
    mirrors.set(sp.key, mirror('v1'));
    r.check(sp.key);
    r.check(sp.key); // a status patch re-reads the mirror
    mirrors.set(sp.key, mirror('v2'));
    r.check(sp.key);
    expect(told).toEqual([
      [sp.uid, 'v1'],
      [sp.uid, 'v2'],
    ]);
  });

  it('tells nothing for a mirror not of the current static pod', () => {
    const { told, mirrors, r } = setup();
    mirrors.set(sp.key, mirror('v1', { hash: 'stale-hash' }));
    r.check(sp.key);
    expect(told).toEqual([]);
  });

  it('a mirror seen before its static pod is told once the static pod is desired', () => {
    const { told, mirrors, desired, r } = setup();
    desired.clear();
    mirrors.set(sp.key, mirror('v1'));
    r.checkAll([sp.key], new Set());
    expect(told).toEqual([]);
    desired.set(sp.key, sp);
    r.checkAll([sp.key], new Set([sp.uid]));
    expect(told).toEqual([[sp.uid, 'v1']]);
  });
});

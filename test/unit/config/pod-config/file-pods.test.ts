import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FilePods } from '../../../../src/config/pod-config/file-pods';
import { loadManifest } from '../../../../src/config/manifest';
import type { PodUpdate, StaticPod } from '../../../../src/config/types';
import { podYaml } from '../helpers';

let clock = 0;
function sp(file: string, name: string, image = 'busybox:1.36'): StaticPod {
  const r = loadManifest(file, podYaml(name, image), 'node-a', new Date(++clock * 1000));
  if ('error' in r) throw new Error(r.error.message);
  return r.pod;
}
const ops = (us: PodUpdate[]) =>
  us.map((u) => `${u.op} ${u.pod.key} ${u.pod.file}${u.op === 'UPDATE' ? ` (was ${u.previous.file})` : ''}`);

describe('FilePods', () => {
  it('adds, updates on a content change, ignores unchanged content, removes', () => {
    const d = new FilePods();
    const v1 = sp('/m/web.yaml', 'web');
    expect(ops(d.setFile(v1).updates)).toEqual(['ADD default/web-node-a /m/web.yaml']);
    // Same content loaded again (a rescan, a touch): nothing, and the first-seen time stays.
    expect(d.setFile(sp('/m/web.yaml', 'web')).updates).toEqual([]);
    expect(d.pods()[0]).toBe(v1);
    const v2 = sp('/m/web.yaml', 'web', 'busybox:1.37');
    const up = d.setFile(v2).updates;
    expect(up).toEqual([{ op: 'UPDATE', pod: v2, previous: v1 }]);
    expect(ops(d.removeFile('/m/web.yaml').updates)).toEqual(['REMOVE default/web-node-a /m/web.yaml']);
    expect(d.pods()).toEqual([]);
  });

  it('keeps the last good pod of a file whose new content is broken (no call, no change)', () => {
    const d = new FilePods();
    d.setFile(sp('/m/web.yaml', 'web'));
    // The file source reports the error and does not touch the desired set.
    expect(d.pods().map((p) => p.key)).toEqual(['default/web-node-a']);
  });

  it('renaming the pod inside a file removes the old key and adds the new', () => {
    const d = new FilePods();
    d.setFile(sp('/m/a.yaml', 'web'));
    expect(ops(d.setFile(sp('/m/a.yaml', 'api')).updates)).toEqual([
      'REMOVE default/web-node-a /m/a.yaml',
      'ADD default/api-node-a /m/a.yaml',
    ]);
  });

  it('lets the first file by name win a key, refuses the other naming both, and hands over when the winner goes', () => {
    const d = new FilePods();
    // b.yaml arrives first and runs.
    expect(ops(d.setFile(sp('/m/b.yaml', 'web')).updates)).toEqual(['ADD default/web-node-a /m/b.yaml']);
    // a.yaml sorts first: it takes the key over, b.yaml is refused.
    const c1 = d.setFile(sp('/m/a.yaml', 'web'));
    expect(ops(c1.updates)).toEqual(['UPDATE default/web-node-a /m/a.yaml (was /m/b.yaml)']);
    expect(c1.errors).toEqual([
      {
        file: '/m/b.yaml',
        podKey: 'default/web-node-a',
        message: expect.stringMatching(
          /^pod default\/web-node-a is already declared by \/m\/a\.yaml; \/m\/b\.yaml is ignored/,
        ),
      },
    ]);
    // c.yaml also declares it: refused, nothing changes for the running pod.
    const c2 = d.setFile(sp('/m/c.yaml', 'web'));
    expect(c2.updates).toEqual([]);
    expect(c2.errors.map((e) => e.file)).toEqual(['/m/c.yaml']);
    // An unrelated change does not repeat the conflict errors.
    expect(d.setFile(sp('/m/z.yaml', 'other')).errors).toEqual([]);
    // The winner goes: b.yaml (next by name) takes over; c.yaml is now refused because of b.yaml.
    const c3 = d.removeFile('/m/a.yaml');
    expect(ops(c3.updates)).toEqual(['UPDATE default/web-node-a /m/b.yaml (was /m/a.yaml)']);
    expect(c3.errors).toEqual([
      {
        file: '/m/c.yaml',
        podKey: 'default/web-node-a',
        message: expect.stringContaining('already declared by /m/b.yaml'),
      },
    ]);
    d.removeFile('/m/b.yaml');
    expect(d.pods().find((p) => p.key === 'default/web-node-a')?.file).toBe('/m/c.yaml');
    expect(ops(d.removeFile('/m/c.yaml').updates)).toEqual(['REMOVE default/web-node-a /m/c.yaml']);
  });

  it('the same files give the same winner whatever order they arrive in', () => {
    const one = new FilePods();
    one.setFile(sp('/m/a.yaml', 'web'));
    one.setFile(sp('/m/b.yaml', 'web'));
    const two = new FilePods();
    two.setFile(sp('/m/b.yaml', 'web'));
    two.setFile(sp('/m/a.yaml', 'web'));
    expect(one.pods().map((p) => p.file)).toEqual(['/m/a.yaml']);
    expect(two.pods().map((p) => p.file)).toEqual(['/m/a.yaml']);
  });

  it('an edit of a losing file is answered again', () => {
    const d = new FilePods();
    d.setFile(sp('/m/a.yaml', 'web'));
    expect(d.setFile(sp('/m/b.yaml', 'web')).errors).toHaveLength(1);
    expect(d.setFile(sp('/m/b.yaml', 'web', 'busybox:2')).errors).toHaveLength(1);
  });

  it('a losing file that declares another key is accepted', () => {
    const d = new FilePods();
    d.setFile(sp('/m/a.yaml', 'web'));
    d.setFile(sp('/m/b.yaml', 'web'));
    const c = d.setFile(sp('/m/b.yaml', 'api'));
    expect(ops(c.updates)).toEqual(['ADD default/api-node-a /m/b.yaml']);
    expect(c.errors).toEqual([]);
  });

  it('emits REMOVE before ADD before UPDATE', () => {
    const d = new FilePods();
    d.setFile(sp('/m/a.yaml', 'a'));
    d.setFile(sp('/m/b.yaml', 'b'));
    d.setFile(sp('/m/b2.yaml', 'c'));
    // b2.yaml changes to declare b's key: it loses to b.yaml; key c is removed.
    expect(ops(d.setFile(sp('/m/b2.yaml', 'b')).updates)).toEqual(['REMOVE default/c-node-a /m/b2.yaml']);
    // a.yaml now declares c: a is removed, c added.
    expect(ops(d.setFile(sp('/m/a.yaml', 'c')).updates)).toEqual([
      'REMOVE default/a-node-a /m/a.yaml',
      'ADD default/c-node-a /m/a.yaml',
    ]);
  });

  it('refuses a second file that pins a UID already used, naming both files', () => {
    const pinned = (file: string, name: string) => {
      const r = loadManifest(
        file,
        podYaml(name).replace(`name: ${name}\n`, `name: ${name}\n  uid: 11111111-2222-3333-4444-555555555555\n`),
        'node-a',
        new Date(0),
      );
      if ('error' in r) throw new Error(r.error.message);
      return r.pod;
    };
    const d = new FilePods();
    d.putFile(pinned('/m/b.yaml', 'second'));
    d.putFile(pinned('/m/a.yaml', 'first'));
    const change = d.reconcile();
    expect(ops(change.updates)).toEqual(['ADD default/first-node-a /m/a.yaml']);
    expect(change.errors).toEqual([
      {
        file: '/m/b.yaml',
        podKey: 'default/second-node-a',
        message:
          'pod uid 11111111-2222-3333-4444-555555555555 is already pinned by /m/a.yaml (for default/first-node-a); /m/b.yaml is ignored until that file is removed or declares another pod',
      },
    ]);
    // The first goes: the second takes over.
    expect(ops(d.removeFile('/m/a.yaml').updates)).toEqual([
      'REMOVE default/first-node-a /m/a.yaml',
      'ADD default/second-node-a /m/b.yaml',
    ]);
  });
});

describe('FilePods, difference by difference', () => {
  // Made once: the properties below only move these between files, keys and UIDs.
  const made = new Map<string, StaticPod>();
  const podOf = (file: string, name: string, uid: string): StaticPod => {
    const id = `${file}|${name}`;
    let base = made.get(id);
    if (!base) made.set(id, (base = sp(file, name)));
    return uid === 'computed' ? base : { ...base, uid };
  };
  const FILES = ['/m/a.yaml', '/m/b.yaml', '/m/c.yaml', '/m/d.yaml', '/m/e.yaml'];
  const step = fc.record({
    file: fc.constantFrom(...FILES),
    drop: fc.boolean(),
    name: fc.constantFrom('web', 'api', 'db'),
    uid: fc.constantFrom('computed', 'pinned-1', 'pinned-2'),
    reconcile: fc.boolean(),
  });
  const view = (d: FilePods) => ({
    pods: d
      .pods()
      .map((p) => `${p.key} ${p.file} ${p.uid}`)
      .sort(),
    losing: FILES.filter((f) => d.isLosing(f)),
  });

  it('tells the same desired set as a difference over every file would, through key and UID clashes', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const d = new FilePods();
        const held = new Map<string, StaticPod>();
        const told = new Map<string, string>();
        const check = (): void => {
          for (const u of d.reconcile().updates) {
            if (u.op === 'REMOVE') told.delete(u.pod.key);
            else told.set(u.pod.key, `${u.pod.key} ${u.pod.file} ${u.pod.uid}`);
          }
          // A fresh set given every file at once walks them all.
          const whole = new FilePods();
          for (const p of [...held.values()].reverse()) whole.putFile(p);
          whole.reconcile();
          expect(view(d)).toEqual(view(whole));
          expect([...told.values()].sort()).toEqual(view(whole).pods);
        };
        for (const s of steps) {
          if (s.drop) {
            held.delete(s.file);
            d.dropFile(s.file);
          } else {
            const p = podOf(s.file, s.name, s.uid);
            held.set(s.file, p);
            d.putFile(p);
          }
          if (s.reconcile) check();
        }
        check();
      }),
      { numRuns: 300 },
    );
  });
});

import { describe, expect, it } from 'vitest';
import { ignoredNameReason, OnceSet } from '../../../src/config/ignore';

describe('ignoredNameReason', () => {
  it.each([
    '.web.yaml.swp',
    '.web.yaml.swx',
    'web.yaml.swp',
    'web.yaml~',
    'web.yaml.bak',
    '#web.yaml#',
    '.#web.yaml',
    'web.yaml.tmp',
    'web.yaml.orig',
    'web.yaml.dpkg-new',
    'web.yaml.dpkg-old',
    'web.yaml.dpkg-dist',
    'web.yaml.dpkg-tmp',
    'web.yaml.rpmnew',
    'web.yaml.rpmsave',
    'web.yaml.rpmorig',
    '.hidden',
  ])('skips %s with a reason', (name) => {
    expect(ignoredNameReason(`/etc/kubernetes/manifests/${name}`)).toEqual(expect.any(String));
  });

  it.each(['web.yaml', 'web.yml', 'web.json', 'etcd', 'kube-apiserver.yaml', 'back.yaml', 'tmp.yaml'])(
    'reads %s',
    (name) => {
      expect(ignoredNameReason(`/etc/kubernetes/manifests/${name}`)).toBeUndefined();
    },
  );

  it('judges the base name only, not the directory', () => {
    expect(ignoredNameReason('/home/.config/manifests/web.yaml')).toBeUndefined();
  });
});

describe('OnceSet bounds', () => {
  it('forgets its oldest names past its capacity', () => {
    const s = new OnceSet(3);
    for (const k of ['a', 'b', 'c', 'd']) expect(s.first(k)).toBe(true);
    expect(s.size).toBe(3);
    expect(s.first('d')).toBe(false);
    expect(s.first('a')).toBe(true); // evicted, so reported again
  });
});

import { describe, expect, it } from 'vitest';
import { ignoredNameReason } from '../../../src/config/ignore';

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

  it.each(['web.yaml', 'web.yml', 'web.json', 'etcd', 'kube-apiserver.yaml', 'back.yaml', 'tmp.yaml'])('reads %s', (name) => {
    expect(ignoredNameReason(`/etc/kubernetes/manifests/${name}`)).toBeUndefined();
  });

  it('judges the base name only, not the directory', () => {
    expect(ignoredNameReason('/home/.config/manifests/web.yaml')).toBeUndefined();
  });
});

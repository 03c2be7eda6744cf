import { describe, expect, it } from 'vitest';
import { parseKubeletPath } from '../../../src/server/kubelet/kubelet-path.js';

describe('kubelet API paths, parsed strictly', () => {
  it('recognises each route with exactly its segments', () => {
    expect(parseKubeletPath('/containerLogs/kube-system/etcd-n1/etcd')).toEqual({
      kind: 'containerLogs',
      pod: { namespace: 'kube-system', name: 'etcd-n1' },
      container: 'etcd',
    });
    expect(parseKubeletPath('/exec/kube-system/etcd-n1/etcd')).toEqual({
      kind: 'exec',
      pod: { namespace: 'kube-system', name: 'etcd-n1' },
      container: 'etcd',
    });
    expect(parseKubeletPath('/attach/kube-system/etcd-n1/0123abcd/etcd')).toEqual({
      kind: 'attach',
      pod: { namespace: 'kube-system', name: 'etcd-n1', uid: '0123abcd' },
      container: 'etcd',
    });
    expect(parseKubeletPath('/portForward/kube-system/etcd-n1')).toEqual({
      kind: 'portForward',
      pod: { namespace: 'kube-system', name: 'etcd-n1' },
    });
    expect(parseKubeletPath('/pods')).toEqual({ kind: 'pods' });
    expect(parseKubeletPath('/pods/')).toEqual({ kind: 'pods' });
    expect(parseKubeletPath('/healthz/syncloop')).toEqual({ kind: 'healthz', check: 'syncloop' });
    expect(parseKubeletPath('/metrics/resource')).toEqual({ kind: 'metrics/resource' });
    expect(parseKubeletPath('/stats/summary')).toEqual({ kind: 'stats/summary' });
    expect(parseKubeletPath('/configz')).toEqual({ kind: 'configz' });
  });

  it('refuses dot segments, empty segments, encoded slashes, extra segments and invalid names', () => {
    for (const p of [
      '/containerLogs/kube-system/../etcd',
      '/containerLogs/kube-system/./etcd-n1/etcd',
      '/containerLogs//etcd-n1/etcd',
      '/containerLogs/kube-system/etcd-n1%2Fx/etcd',
      '/containerLogs/kube-system/etcd-n1/etcd/extra',
      '/containerLogs/kube-system/etcd-n1',
      '/containerLogs/Kube-System/etcd-n1/etcd',
      '/containerLogs/kube-system/etcd_n1/etcd',
      '/containerLogs/kube-system/etcd-n1/%E0%A4%A',
      '/exec/kube-system/etcd-n1/bad uid!/etcd',
      '/portForward/kube-system/etcd-n1/uid/extra',
      '/stats',
      '/stats/summary/x',
      '/metrics/cadvisor',
      'containerLogs/a/b/c',
      '/nope',
    ]) {
      expect(parseKubeletPath(p), p).toBeUndefined();
    }
    expect(parseKubeletPath('/run/ns/p/c')).toEqual({ kind: 'unsupported-debug' });
  });
});

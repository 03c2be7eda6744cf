import { describe, expect, it } from 'vitest';
import { NodeFlagError, parseNodeLabels, parseTaints } from '../../../src/cli/settings/node-flags.js';

describe('--node-labels', () => {
  it('parses key=value pairs, allowing the kubelet namespaces', () => {
    expect(
      parseNodeLabels('a=b, example.com/pool=cp,node.kubernetes.io/exclude-from-external-load-balancers='),
    ).toEqual({
      a: 'b',
      'example.com/pool': 'cp',
      'node.kubernetes.io/exclude-from-external-load-balancers': '',
    });
  });
  it('takes a key alone as an empty value, as the kubelet does', () => {
    expect(parseNodeLabels('example.com/edge')).toEqual({ 'example.com/edge': '' });
  });
  it('refuses labels a node may not set on itself, and junk', () => {
    expect(() => parseNodeLabels('node-role.kubernetes.io/control-plane=')).toThrow(NodeFlagError);
    expect(() => parseNodeLabels('bad key=x')).toThrow(/"bad key" is not a valid label key/);
    expect(() => parseNodeLabels('k=not ok')).toThrow(/"not ok" is not a valid label value/);
  });
});

describe('--register-with-taints', () => {
  it('parses key=value:Effect and key:Effect', () => {
    expect(parseTaints('node-role.kubernetes.io/control-plane:NoSchedule,dedicated=etcd:NoExecute')).toEqual([
      { key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' },
      { key: 'dedicated', value: 'etcd', effect: 'NoExecute' },
    ]);
  });
  it('refuses an unknown effect', () => {
    expect(() => parseTaints('a=b:Never')).toThrow(/effect "Never"/);
  });
});

// The desired set's API pods drive the registrations: an ADD registers, an UPDATE of the same UID
// registers again, one under a new UID unregisters the old, a REMOVE unregisters; static pods never.
import { describe, expect, it } from 'vitest';
import { registerApiPods } from '../../../../src/apiserver/pod-objects/register-api-pods.js';
import { PodConfig } from '../../../../src/config/pod-config/pod-config.js';
import type { StaticPod } from '../../../../src/config/types.js';
import { nullLogger } from '../../../../src/log/logger.js';

const pod = (name: string, uid: string, source: 'api' | 'file', configMap = 'cm'): StaticPod => ({
  uid,
  key: `kube-system/${name}`,
  file: source === 'api' ? `api:/api/v1/namespaces/kube-system/pods/${name}` : `/m/${name}.yaml`,
  pod: {
    metadata: { name, namespace: 'kube-system', uid, annotations: { 'kubernetes.io/config.source': source } },
    spec: { containers: [{ name: 'c' }], volumes: [{ name: 'v', configMap: { name: configMap } }] },
  },
});

describe('registerApiPods', () => {
  it('registers what the set takes on from the API source and unregisters what it lets go of', () => {
    const config = new PodConfig({ sources: ['file', 'api'], logger: nullLogger });
    const api = config.feed('api');
    api.update({ op: 'ADD', pod: pod('early', 'u0', 'api') });
    const log: string[] = [];
    registerApiPods(config.apiPodView(), {
      registerPod: (p) => log.push(`register ${p.metadata.uid} ${p.spec?.volumes?.[0]?.configMap?.name}`),
      unregisterPod: (uid) => log.push(`unregister ${uid}`),
    });
    expect(log).toEqual(['register u0 cm']);
    log.length = 0;

    config.feed('file').update({ op: 'ADD', pod: pod('etcd', 's1', 'file') });
    api.update({ op: 'ADD', pod: pod('proxy', 'u1', 'api') });
    api.update({ op: 'UPDATE', pod: pod('proxy', 'u1', 'api', 'cm2'), previous: pod('proxy', 'u1', 'api') });
    api.update({ op: 'UPDATE', pod: pod('proxy', 'u2', 'api'), previous: pod('proxy', 'u1', 'api', 'cm2') });
    api.update({ op: 'REMOVE', pod: pod('proxy', 'u2', 'api') });
    // A successor is registered before its predecessor goes: an object both name keeps its watch.
    expect(log).toEqual(['register u1 cm', 'register u1 cm2', 'register u2 cm', 'unregister u1', 'unregister u2']);
  });
});

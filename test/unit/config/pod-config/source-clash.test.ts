// Two sources declaring one pod: the manifest file wins, the other waits, and downstream never
// sees the name twice.
import { describe, expect, it } from 'vitest';
import { PodConfig } from '../../../../src/config/pod-config/pod-config.js';
import type { PodUpdate, StaticPod } from '../../../../src/config/types.js';
import { memoryLogger } from '../../../../src/log/logger.js';

const pod = (key: string, uid: string, file: string): StaticPod => ({
  uid,
  key,
  file,
  pod: {
    metadata: { name: key.split('/')[1]!, namespace: key.split('/')[0]!, uid, annotations: {} },
    spec: { containers: [] },
  },
});

describe('PodConfig: a clash between sources', () => {
  it('lets the file source win a clash and hands the name over when the file goes', () => {
    const out: string[] = [];
    const { logger, lines } = memoryLogger();
    const m = new PodConfig({ sources: ['file', 'http'], logger });
    m.subscribe((u: PodUpdate) =>
      out.push(`${u.op} ${u.pod.uid}${u.op === 'UPDATE' ? ` (was ${u.previous.uid})` : ''}`),
    );
    const fromHttp = pod('kube-system/web-n', 'h1', 'http://x/pods');
    const fromFile = pod('kube-system/web-n', 'f1', '/m/web.yaml');
    m.update('http', { op: 'ADD', pod: fromHttp });
    m.update('file', { op: 'ADD', pod: fromFile });
    m.update('http', { op: 'UPDATE', pod: { ...fromHttp, uid: 'h2' }, previous: fromHttp });
    m.update('file', { op: 'REMOVE', pod: fromFile });
    m.update('http', { op: 'REMOVE', pod: { ...fromHttp, uid: 'h2' } });
    expect(out).toEqual(['ADD h1', 'UPDATE f1 (was h1)', 'UPDATE h2 (was f1)', 'REMOVE h2']);
    expect(lines.filter((l) => l.includes('another source declares the same pod'))).toHaveLength(2);
  });
});

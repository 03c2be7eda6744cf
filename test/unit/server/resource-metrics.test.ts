import { describe, expect, it } from 'vitest';
import { goDuration } from '../../../src/util/duration.js';
import { renderResourceMetrics } from '../../../src/server/stats/resource-metrics.js';

describe('/metrics/resource', () => {
  it("writes the kubelet resource metrics with each sample's timestamp, label names sorted", () => {
    const t = '2026-01-01T00:00:10Z';
    const text = renderResourceMetrics({
      node: {
        nodeName: 'n1',
        startTime: t,
        cpu: { time: t, usageCoreNanoSeconds: 2_500_000_000 },
        memory: { time: t, workingSetBytes: 1024 },
      },
      pods: [
        {
          podRef: { name: 'etcd-n1', namespace: 'kube-system', uid: 'u' },
          startTime: t,
          containers: [
            {
              name: 'etcd',
              startTime: '2026-01-01T00:00:01Z',
              cpu: { time: t, usageCoreNanoSeconds: 1_000_000_000 },
              memory: { time: t, workingSetBytes: 512 },
            },
          ],
          cpu: { time: t, usageCoreNanoSeconds: 1_000_000_000 },
          memory: { time: t, workingSetBytes: 512 },
        },
      ],
    });
    const ms = Date.parse(t);
    expect(text).toContain(
      `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds\n# TYPE container_cpu_usage_seconds_total counter\ncontainer_cpu_usage_seconds_total{container="etcd",namespace="kube-system",pod="etcd-n1"} 1 ${ms}\n`,
    );
    expect(text).toContain(
      `container_memory_working_set_bytes{container="etcd",namespace="kube-system",pod="etcd-n1"} 512 ${ms}\n`,
    );
    expect(text).toContain(
      `container_start_time_seconds{container="etcd",namespace="kube-system",pod="etcd-n1"} ${Date.parse('2026-01-01T00:00:01Z') / 1000}\n`,
    );
    expect(text).toContain(`node_cpu_usage_seconds_total 2.5 ${ms}\n`);
    expect(text).toContain(`pod_memory_working_set_bytes{namespace="kube-system",pod="etcd-n1"} 512 ${ms}\n`);
    expect(text.endsWith('resource_scrape_error 0\n')).toBe(true);
  });

  it('says so when the stats could not be read', () => {
    expect(renderResourceMetrics(undefined)).toBe(
      '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise\n# TYPE resource_scrape_error gauge\nresource_scrape_error 1\n',
    );
  });
});

describe('/configz durations', () => {
  it('are written as Go prints a time.Duration', () => {
    expect([0, 500, 20_000, 60_000, 90_000, 300_000, 4 * 3_600_000, 1500].map(goDuration)).toEqual([
      '0s',
      '500ms',
      '20s',
      '1m0s',
      '1m30s',
      '5m0s',
      '4h0m0s',
      '1.5s',
    ]);
  });
});

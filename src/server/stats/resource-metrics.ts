// /metrics/resource as the kubelet's resource metrics collector writes it (what metrics-server
// scrapes): cumulative CPU in core-seconds and working-set memory for the node, each pod and each
// container, container start times, with the sample's own timestamp in milliseconds.
import type { Summary } from './summary-types.js';

export const RESOURCE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const ms = (time: string): number => Date.parse(time);
const esc = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: string[];
}

export function renderResourceMetrics(summary: Summary | undefined): string {
  const fam = (name: string, help: string, type: 'counter' | 'gauge'): Family => ({ name, help, type, samples: [] });
  const containerCpu = fam(
    'container_cpu_usage_seconds_total',
    '[STABLE] Cumulative cpu time consumed by the container in core-seconds',
    'counter',
  );
  const containerMem = fam(
    'container_memory_working_set_bytes',
    '[STABLE] Current working set of the container in bytes',
    'gauge',
  );
  const containerStart = fam(
    'container_start_time_seconds',
    '[STABLE] Start time of the container since unix epoch in seconds',
    'gauge',
  );
  const nodeCpu = fam(
    'node_cpu_usage_seconds_total',
    '[STABLE] Cumulative cpu time consumed by the node in core-seconds',
    'counter',
  );
  const nodeMem = fam('node_memory_working_set_bytes', '[STABLE] Current working set of the node in bytes', 'gauge');
  const podCpu = fam(
    'pod_cpu_usage_seconds_total',
    '[STABLE] Cumulative cpu time consumed by the pod in core-seconds',
    'counter',
  );
  const podMem = fam('pod_memory_working_set_bytes', '[STABLE] Current working set of the pod in bytes', 'gauge');
  const scrapeError = fam(
    'resource_scrape_error',
    '[STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
    'gauge',
  );
  if (summary) {
    const n = summary.node;
    if (n.cpu?.usageCoreNanoSeconds !== undefined)
      nodeCpu.samples.push(`node_cpu_usage_seconds_total ${n.cpu.usageCoreNanoSeconds / 1e9} ${ms(n.cpu.time)}`);
    if (n.memory?.workingSetBytes !== undefined)
      nodeMem.samples.push(`node_memory_working_set_bytes ${n.memory.workingSetBytes} ${ms(n.memory.time)}`);
    for (const p of summary.pods) {
      const podLabels = `namespace="${esc(p.podRef.namespace)}",pod="${esc(p.podRef.name)}"`;
      for (const c of p.containers) {
        const labels = `container="${esc(c.name)}",${podLabels}`;
        const start = ms(c.startTime);
        if (start > 0) containerStart.samples.push(`container_start_time_seconds{${labels}} ${start / 1000}`);
        if (c.cpu?.usageCoreNanoSeconds !== undefined)
          containerCpu.samples.push(
            `container_cpu_usage_seconds_total{${labels}} ${c.cpu.usageCoreNanoSeconds / 1e9} ${ms(c.cpu.time)}`,
          );
        if (c.memory?.workingSetBytes !== undefined)
          containerMem.samples.push(
            `container_memory_working_set_bytes{${labels}} ${c.memory.workingSetBytes} ${ms(c.memory.time)}`,
          );
      }
      if (p.cpu?.usageCoreNanoSeconds !== undefined)
        podCpu.samples.push(
          `pod_cpu_usage_seconds_total{${podLabels}} ${p.cpu.usageCoreNanoSeconds / 1e9} ${ms(p.cpu.time)}`,
        );
      if (p.memory?.workingSetBytes !== undefined)
        podMem.samples.push(
          `pod_memory_working_set_bytes{${podLabels}} ${p.memory.workingSetBytes} ${ms(p.memory.time)}`,
        );
    }
  }
  scrapeError.samples.push(`resource_scrape_error ${summary ? 0 : 1}`);
  const families = [containerCpu, containerMem, containerStart, nodeCpu, nodeMem, podCpu, podMem, scrapeError];
  return (
    families
      .filter((f) => f.samples.length > 0)
      .map((f) => [`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} ${f.type}`, ...f.samples].join('\n'))
      .join('\n') + '\n'
  );
}

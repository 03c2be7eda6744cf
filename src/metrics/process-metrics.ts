// The standard process_* families (CPU, resident and virtual memory, start time, file
// descriptors), as client_golang's process collector exposes them for the kubelet. Read from
// /proc at scrape time only: nothing runs between scrapes.
import type { Registry } from 'prom-client';
import registerCpu from 'prom-client/lib/metrics/processCpuTotal.js';
import registerMemory from 'prom-client/lib/metrics/osMemoryHeap.js';
import registerMaxFds from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import registerOpenFds from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import registerStartTime from 'prom-client/lib/metrics/processStartTime.js';

export function registerProcessMetrics(registry: Registry): void {
  registerCpu(registry);
  registerStartTime(registry);
  registerMemory(registry);
  registerOpenFds(registry);
  registerMaxFds(registry);
}

// prom-client's process collectors, loaded one by one (its collectDefaultMetrics would also start
// the event-loop lag monitor, a 10 ms timer that costs idle CPU). They are CommonJS modules
// without type declarations of their own.
declare module 'prom-client/lib/metrics/processCpuTotal.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry) => void;
  export = register;
}
declare module 'prom-client/lib/metrics/processStartTime.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry) => void;
  export = register;
}
declare module 'prom-client/lib/metrics/osMemoryHeap.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry) => void;
  export = register;
}
declare module 'prom-client/lib/metrics/processOpenFileDescriptors.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry) => void;
  export = register;
}
declare module 'prom-client/lib/metrics/processMaxFileDescriptors.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry) => void;
  export = register;
}

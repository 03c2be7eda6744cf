// prom-client's registry and metric classes, loaded from their own files: its index also loads the
// cluster aggregator (node:cluster, and with it node:dgram and node:child_process's cluster code),
// the Pushgateway (node:http, node:https, node:url, node:zlib), Summary (tdigest, bintrees) and the
// default collectors (node:perf_hooks), none of which the agent uses. The types are the index's.
declare module 'prom-client/lib/registry.js' {
  import { Registry } from 'prom-client';
  export = Registry;
}
declare module 'prom-client/lib/counter.js' {
  import { Counter } from 'prom-client';
  export = Counter;
}
declare module 'prom-client/lib/gauge.js' {
  import { Gauge } from 'prom-client';
  export = Gauge;
}
declare module 'prom-client/lib/histogram.js' {
  import { Histogram } from 'prom-client';
  export = Histogram;
}

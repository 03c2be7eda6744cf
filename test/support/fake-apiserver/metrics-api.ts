// metrics.k8s.io/v1beta1 as metrics-server serves it, enough for `kubectl top`: each node's
// /metrics/resource is scraped (with the API server's kubelet client certificate) and CPU is the
// rate between two scrapes, memory the working set. The previous scrape of each node is kept; a
// node scraped for the first time is scraped twice, a second apart.
import { request } from 'node:https';
import type { KubeletClientTls } from './kubelet/node-endpoint.js';
import { ApiError } from './status.js';
import type { ObjectStore } from './store.js';
import { arr, isObject, obj, str, type JsonObject, type KObject } from './types.js';

interface Scrape {
  at: number;
  /** `node`, `pod/<ns>/<pod>` or `container/<ns>/<pod>/<c>` → value. */
  cpu: Map<string, number>;
  memory: Map<string, number>;
}

function get(url: URL, tls: KubeletClientTls): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = request(
      url,
      { cert: tls.cert, key: tls.key, ca: tls.ca, rejectUnauthorized: tls.ca !== undefined, agent: false },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(text)
            : reject(new Error(`${url.pathname}: ${res.statusCode} ${text.trim()}`)),
        );
      },
    );
    r.on('error', reject);
    r.end();
  });
}

export function parseResourceMetrics(text: string): Scrape {
  const s: Scrape = { at: Date.now(), cpu: new Map(), memory: new Map() };
  for (const line of text.split('\n')) {
    const m = /^(\w+)(?:\{([^}]*)\})? (\S+)/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const v = Number(m[3]);
    const key = m[1]!.startsWith('node_')
      ? 'node'
      : m[1]!.startsWith('pod_')
        ? `pod/${labels.namespace}/${labels.pod}`
        : `container/${labels.namespace}/${labels.pod}/${labels.container}`;
    if (m[1]!.endsWith('_cpu_usage_seconds_total')) s.cpu.set(key, v);
    if (m[1]!.endsWith('_memory_working_set_bytes')) s.memory.set(key, v);
  }
  return s;
}

function nodeUrl(node: KObject, path: string): URL | undefined {
  const status = obj(node.status);
  const addr = arr(status.addresses).find((a) => isObject(a) && str(a.type) === 'InternalIP');
  const port = obj(obj(status.daemonEndpoints).kubeletEndpoint).Port;
  if (!isObject(addr) || typeof port !== 'number') return undefined;
  return new URL(`https://${str(addr.address)}:${port}${path}`);
}

export class MetricsApi {
  private readonly last = new Map<string, Scrape>();

  constructor(
    private readonly store: ObjectStore,
    private readonly tls: () => KubeletClientTls,
  ) {}

  /** Two scrapes of the node (this one and the one before), for rates. */
  private async scrape(node: KObject): Promise<{ now: Scrape; before: Scrape } | undefined> {
    const url = nodeUrl(node, '/metrics/resource');
    if (!url) return undefined;
    const name = str(node.metadata.name);
    let before = this.last.get(name);
    if (!before || Date.now() - before.at > 120_000) {
      before = parseResourceMetrics(await get(url, this.tls()));
      await new Promise((r) => setTimeout(r, 1000));
    }
    const now = parseResourceMetrics(await get(url, this.tls()));
    this.last.set(name, now);
    return { now, before };
  }

  private usage(s: { now: Scrape; before: Scrape }, key: string): JsonObject | undefined {
    const c1 = s.now.cpu.get(key);
    const c0 = s.before.cpu.get(key);
    const mem = s.now.memory.get(key);
    if (c1 === undefined || mem === undefined) return undefined;
    const seconds = Math.max(0.001, (s.now.at - s.before.at) / 1000);
    const nano = c0 === undefined ? 0 : Math.max(0, Math.round(((c1 - c0) / seconds) * 1e9));
    return { cpu: `${nano}n`, memory: `${Math.floor(mem / 1024)}Ki` };
  }

  async serve(resource: 'nodes' | 'pods', namespace: string, name: string): Promise<JsonObject> {
    const ts = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const nodes = this.store.list('nodes', '');
    const items: JsonObject[] = [];
    for (const node of nodes) {
      let s;
      try {
        s = await this.scrape(node);
      } catch {
        continue; // metrics-server leaves out a node it cannot scrape
      }
      if (!s) continue;
      const window = `${Math.round((s.now.at - s.before.at) / 1000)}s`;
      if (resource === 'nodes') {
        const u = this.usage(s, 'node');
        if (u && (!name || name === str(node.metadata.name)))
          items.push({
            metadata: { name: str(node.metadata.name), creationTimestamp: ts },
            timestamp: ts,
            window,
            usage: u,
          });
        continue;
      }
      const pods = new Map<string, JsonObject[]>();
      for (const key of s.now.cpu.keys()) {
        const [kind, ns, pod, container] = key.split('/');
        if (kind !== 'container' || (namespace && ns !== namespace) || (name && pod !== name)) continue;
        const u = this.usage(s, key);
        if (!u) continue;
        const k = `${ns}/${pod}`;
        pods.set(k, [...(pods.get(k) ?? []), { name: container!, usage: u }]);
      }
      for (const [k, containers] of pods) {
        const [ns, pod] = k.split('/');
        items.push({
          metadata: { name: pod!, namespace: ns!, creationTimestamp: ts },
          timestamp: ts,
          window,
          containers,
        });
      }
    }
    const kind = resource === 'nodes' ? 'NodeMetrics' : 'PodMetrics';
    if (name) {
      const one = items[0];
      if (!one)
        throw new ApiError(404, 'NotFound', `${resource}.metrics.k8s.io "${name}" not found`, {
          name,
          group: 'metrics.k8s.io',
          kind: resource,
        });
      return { kind, apiVersion: 'metrics.k8s.io/v1beta1', ...one };
    }
    return {
      kind: `${kind}List`,
      apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: {},
      items: items.map((i) => ({ ...i })),
    };
  }
}

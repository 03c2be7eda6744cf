// A node as `kubeadm init` leaves it for the kubelet, on this machine's real paths, for the kubeadm
// corpus (test/fixtures/kubeadm/<v>): the PKI and kubeconfigs under /etc/kubernetes, /var/lib/etcd,
// the advertise address on lo, the kubelet's files (/var/lib/kubelet/config.yaml,
// kubeadm-flags.env) and the operator's /etc/default/kubelet. It never touches what was there
// before: if any of it already exists, or a control-plane port is taken, it is unavailable (with
// the reason). What it makes is recorded in /etc/kubernetes/.bootlet-test-node.json as it goes and
// removed by cleanup(), or by the next run when the run that made it is gone.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { Pod } from 'kubernetes-types/core/v1';
import { isAlive } from '../../dev/exec.js';
import { writeKubeadmPki } from './kubeadm-pki.js';
import { CGROUP_V1_AGENT_ARGS } from '../../dev/cgroup-v1-host.js';
import { expandExecStart, parseServiceUnit } from './systemd-unit.js';

import { KUBEADM_VERSIONS, type KubeadmVersion } from './kubeadm-versions.js';
export { KUBEADM_VERSIONS, type KubeadmVersion };

/** The corpus's node (test/fixtures/kubeadm/README.md, "Parameters"). */
export const KUBEADM_NODE = {
  name: 'cp-1',
  advertiseAddress: '192.168.56.10',
  serviceIP: '10.96.0.1',
  dnsDomain: 'cluster.local',
} as const;
/** etcd client, peer, metrics; kube-apiserver; controller-manager; scheduler. */
export const CONTROL_PLANE_PORTS = [2379, 2380, 2381, 6443, 10257, 10259];
/** kubeadm init writes etcd's manifest first (etcd phase), then the control plane's. */
export const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

const KUBERNETES_DIR = '/etc/kubernetes';
const MANIFESTS = '/etc/kubernetes/manifests';
const ETCD_DATA = '/var/lib/etcd';
const KUBELET_DIR = '/var/lib/kubelet';
const KUBELET_CONFIG = '/var/lib/kubelet/config.yaml';
const KUBEADM_FLAGS = '/var/lib/kubelet/kubeadm-flags.env';
const ETC_DEFAULT_KUBELET = '/etc/default/kubelet';
const POD_LOGS = '/var/log/pods';
const CONTAINER_LOG_LINKS = '/var/log/containers';
const RECORD = path.join(KUBERNETES_DIR, '.bootlet-test-node.json');

const FIXTURES = fileURLToPath(new URL('../fixtures/kubeadm/', import.meta.url));

export function fixturePath(v: KubeadmVersion, rel: string): string {
  return path.join(FIXTURES, v, rel);
}

export function manifestText(v: KubeadmVersion, component: string): string {
  return fs.readFileSync(fixturePath(v, `manifests/${component}.yaml`), 'utf8');
}

export function manifestPod(v: KubeadmVersion, component: string): Pod {
  return parse(manifestText(v, component)) as Pod;
}

/** Every image the version's manifests name. */
export function kubeadmImageRefs(versions: readonly KubeadmVersion[]): string[] {
  return [
    ...new Set(
      versions.flatMap((v) =>
        COMPONENTS.flatMap((c) => (manifestPod(v, c).spec?.containers ?? []).map((x) => x.image!)),
      ),
    ),
  ].sort();
}

function hostPaths(v: KubeadmVersion): string[] {
  return COMPONENTS.flatMap((c) =>
    (manifestPod(v, c).spec?.volumes ?? []).flatMap((vol) => (vol.hostPath ? [vol.hostPath.path] : [])),
  );
}

/** The first of `p` and its parents that does not exist (what making `p` would create), if any. */
function topmostMissing(p: string): string | undefined {
  let missing: string | undefined;
  for (let cur = path.resolve(p); cur !== '/'; cur = path.dirname(cur)) {
    if (fs.existsSync(cur)) break;
    missing = cur;
  }
  return missing;
}

function listeningPorts(): Set<number> {
  const out = new Set<number>();
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A') out.add(parseInt(cols[1]!.split(':')[1]!, 16)); // LISTEN
    }
  }
  return out;
}

function addressPresent(addr: string): boolean {
  // /proc/net/fib_trie lists every local address as "/32 host LOCAL".
  const trie = fs.readFileSync('/proc/net/fib_trie', 'utf8').split('\n');
  return trie.some((l, i) => l.trim().endsWith(` ${addr}`) && (trie[i + 1] ?? '').includes('/32 host LOCAL'));
}

interface NodeRecord {
  ownerPid: number;
  /** Paths this run made (files or whole trees), removed in reverse order. */
  created: string[];
  /** /var/lib/etcd existed (empty): its contents go, the directory stays. */
  etcdDataExisted: boolean;
  addressAdded: boolean;
  /** Pod log directories and links are removed by name; these two only if this run made them. */
  podLogsCreated: boolean;
  containerLinksCreated: boolean;
}

function readRecord(): NodeRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(RECORD, 'utf8')) as NodeRecord;
  } catch {
    return undefined;
  }
}

function ipAddr(verb: 'add' | 'del', addr: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('ip', ['addr', verb, `${addr}/32`, 'dev', 'lo'], (err, _out, stderr) =>
      err ? reject(new Error(`ip addr ${verb} ${addr}: ${stderr || err.message}`)) : resolve(),
    ),
  );
}

/** Undoes what a record lists. Safe to call twice. */
async function undo(r: NodeRecord): Promise<void> {
  // /etc/kubernetes (which holds the record) goes last, so a failed undo can be retried.
  // /var/lib/kubelet is shared with anything else using the kubelet's default paths (--cert-dir):
  // removed only when nothing else has put anything there.
  for (const p of [...r.created].reverse()) {
    if (p === KUBERNETES_DIR) continue;
    if (p === KUBELET_DIR) {
      try {
        fs.rmdirSync(p);
      } catch {
        /* not empty: someone else's files */
      }
    } else fs.rmSync(p, { recursive: true, force: true });
  }
  if (r.etcdDataExisted) {
    for (const e of fs.existsSync(ETCD_DATA) ? fs.readdirSync(ETCD_DATA) : [])
      fs.rmSync(path.join(ETCD_DATA, e), { recursive: true, force: true });
  }
  // Only the logs of this node's pods (named <namespace>_<component>-<node>_<uid>): others' stay.
  const ours = (name: string) =>
    name.startsWith('kube-system_') && COMPONENTS.some((c) => name.startsWith(`kube-system_${c}-`));
  const oursLink = (name: string) => COMPONENTS.some((c) => name.startsWith(`${c}-`) && name.includes('_kube-system_'));
  for (const [dir, mine, made] of [
    [POD_LOGS, ours, r.podLogsCreated],
    [CONTAINER_LOG_LINKS, oursLink, r.containerLinksCreated],
  ] as const) {
    if (!fs.existsSync(dir)) continue;
    for (const e of fs.readdirSync(dir)) if (mine(e)) fs.rmSync(path.join(dir, e), { recursive: true, force: true });
    if (made) {
      try {
        fs.rmdirSync(dir);
      } catch {
        /* someone else's entries arrived meanwhile: leave it */
      }
    }
  }
  if (r.addressAdded && addressPresent(KUBEADM_NODE.advertiseAddress))
    await ipAddr('del', KUBEADM_NODE.advertiseAddress);
  fs.rmSync(KUBERNETES_DIR, { recursive: true, force: true });
}

/** A node left behind by a run that died: undone so this run can start. */
async function undoStale(): Promise<void> {
  const r = readRecord();
  if (r && !isAlive(r.ownerPid)) await undo(r);
}

/** Why this machine cannot be made into the corpus's node now, or undefined when it can. */
export function kubeadmNodeUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root (host paths, an address on lo)';
  for (const tool of ['ip', 'openssl']) {
    if (!['/usr/sbin', '/usr/bin', '/sbin', '/bin'].some((d) => fs.existsSync(path.join(d, tool)))) return `no ${tool}`;
  }
  const stale = readRecord();
  const staleOk = stale !== undefined && !isAlive(stale.ownerPid);
  if (fs.existsSync(KUBERNETES_DIR) && !staleOk) {
    return stale
      ? `${KUBERNETES_DIR} is in use by another test run (pid ${stale.ownerPid})`
      : `${KUBERNETES_DIR} already exists: not clobbering a real node's files`;
  }
  if (!staleOk) {
    if (fs.existsSync(ETCD_DATA) && fs.readdirSync(ETCD_DATA).length > 0) return `${ETCD_DATA} is not empty`;
    for (const f of [KUBELET_CONFIG, KUBEADM_FLAGS, ETC_DEFAULT_KUBELET])
      if (fs.existsSync(f)) return `${f} already exists`;
    if (addressPresent(KUBEADM_NODE.advertiseAddress))
      return `${KUBEADM_NODE.advertiseAddress} is already an address of this machine`;
  }
  const busy = CONTROL_PLANE_PORTS.filter((p) => listeningPorts().has(p));
  if (busy.length > 0) return `control-plane port(s) ${busy.join(', ')} already in use`;
  return undefined;
}

export interface KubeadmNode {
  /**
   * Writes the version's config.yaml and kubeadm-flags.env where kubeadm writes them, and
   * /etc/default/kubelet with `extraArgs` as KUBELET_EXTRA_ARGS; returns the command line systemd
   * makes of 10-kubeadm.conf's ExecStart with them (argv[0] is /usr/bin/kubelet).
   */
  installKubelet(v: KubeadmVersion, extraArgs: string[]): string[];
  /** Records the hostPaths of `v`'s manifests that do not exist (the agent will make them). */
  expectHostPaths(v: KubeadmVersion): void;
  /** Writes the four manifests as kubeadm does: each file directly (no rename), mode 0600. */
  writeManifests(v: KubeadmVersion, components?: readonly string[]): void;
  removeManifests(): void;
  /** An empty /var/lib/etcd, as before `kubeadm init`. */
  resetEtcd(): void;
  /** etcd's /health on https://127.0.0.1:2379, with kubeadm's CA and the healthcheck-client pair. */
  etcdHealth(): Promise<{ status: number; body: string }>;
  /** A put and a linearizable read back through etcd's v3 JSON gateway, same TLS. */
  etcdPutGet(key: string, value: string): Promise<string | undefined>;
  cleanup(): Promise<void>;
}

/** Makes the node: /etc/kubernetes with the PKI and kubeconfigs, the address, an empty manifests dir. */
export async function prepareKubeadmNode(): Promise<KubeadmNode> {
  await undoStale();
  const why = kubeadmNodeUnavailable();
  if (why) throw new Error(`cannot prepare the kubeadm node: ${why}`);
  const r: NodeRecord = {
    ownerPid: process.pid,
    created: [KUBERNETES_DIR],
    etcdDataExisted: fs.existsSync(ETCD_DATA),
    addressAdded: false,
    podLogsCreated: !fs.existsSync(POD_LOGS),
    containerLinksCreated: !fs.existsSync(CONTAINER_LOG_LINKS),
  };
  const save = () => fs.writeFileSync(RECORD, JSON.stringify(r, null, 2));
  const create = (p: string) => {
    if (!r.created.includes(p)) r.created.push(p);
    save();
  };
  fs.mkdirSync(KUBERNETES_DIR, { mode: 0o755 });
  save();
  try {
    if (!r.etcdDataExisted) create(ETCD_DATA);
    await writeKubeadmPki(KUBERNETES_DIR, {
      nodeName: KUBEADM_NODE.name,
      advertiseAddress: KUBEADM_NODE.advertiseAddress,
      serviceIP: KUBEADM_NODE.serviceIP,
      dnsDomain: KUBEADM_NODE.dnsDomain,
      server: `https://${KUBEADM_NODE.advertiseAddress}:6443`,
    });
    r.addressAdded = true;
    save();
    await ipAddr('add', KUBEADM_NODE.advertiseAddress);
    fs.mkdirSync(MANIFESTS, { mode: 0o700 });
  } catch (err) {
    await undo(r);
    throw err;
  }

  const pki = (f: string) => fs.readFileSync(path.join(KUBERNETES_DIR, 'pki', f));
  const etcdRequest = (method: string, p: string, body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: 2379,
          method,
          path: p,
          ca: pki('etcd/ca.crt'),
          cert: pki('etcd/healthcheck-client.crt'),
          key: pki('etcd/healthcheck-client.key'),
          timeout: 10_000,
          agent: false,
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('etcd request timed out')));
      req.on('error', reject);
      req.end(body);
    });
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  return {
    installKubelet(v, extraArgs) {
      if (!fs.existsSync(KUBELET_DIR)) {
        create(KUBELET_DIR);
        fs.mkdirSync(KUBELET_DIR, { recursive: true, mode: 0o755 });
      }
      for (const [src, dest] of [
        ['kubelet/config.yaml', KUBELET_CONFIG],
        ['kubelet/kubeadm-flags.env', KUBEADM_FLAGS],
      ] as const) {
        create(dest);
        fs.copyFileSync(fixturePath(v, src), dest);
      }
      create(ETC_DEFAULT_KUBELET);
      // An operator of a cgroup v1 node allows it here (KEP-5573), beside the test's overrides.
      fs.writeFileSync(
        ETC_DEFAULT_KUBELET,
        `KUBELET_EXTRA_ARGS=${[...CGROUP_V1_AGENT_ARGS, ...extraArgs].join(' ')}\n`,
      );
      const unit = parseServiceUnit(fs.readFileSync(fixturePath(v, 'kubelet/10-kubeadm.conf'), 'utf8'));
      return expandExecStart(unit, (p) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined));
    },
    expectHostPaths(v) {
      for (const p of hostPaths(v)) {
        const m = topmostMissing(p);
        if (m) create(m);
      }
    },
    writeManifests(v, components = COMPONENTS) {
      fs.mkdirSync(MANIFESTS, { recursive: true, mode: 0o700 });
      for (const c of components)
        fs.writeFileSync(path.join(MANIFESTS, `${c}.yaml`), manifestText(v, c), { mode: 0o600 });
    },
    removeManifests() {
      for (const c of COMPONENTS) fs.rmSync(path.join(MANIFESTS, `${c}.yaml`), { force: true });
    },
    resetEtcd() {
      fs.mkdirSync(ETCD_DATA, { recursive: true, mode: 0o700 });
      for (const e of fs.readdirSync(ETCD_DATA)) fs.rmSync(path.join(ETCD_DATA, e), { recursive: true, force: true });
    },
    etcdHealth: () => etcdRequest('GET', '/health'),
    async etcdPutGet(key, value) {
      const put = await etcdRequest('POST', '/v3/kv/put', JSON.stringify({ key: b64(key), value: b64(value) }));
      if (put.status !== 200) throw new Error(`etcd put: ${put.status} ${put.body}`);
      const got = await etcdRequest('POST', '/v3/kv/range', JSON.stringify({ key: b64(key) }));
      const kvs = (JSON.parse(got.body) as { kvs?: { value?: string }[] }).kvs;
      const v = kvs?.[0]?.value;
      return v === undefined ? undefined : Buffer.from(v, 'base64').toString();
    },
    cleanup: () => undo(r),
  };
}

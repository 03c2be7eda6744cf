// A private containerd for tests, bench and `npm run up`: its own config, sockets, root and state
// under .tmp/, started detached with setsid and stopped by its PID. It never touches a system
// containerd (/run/containerd/containerd.sock, /var/lib/containerd).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CommandError, isAlive, run, sleep, tryRun } from './exec.js';
import { unmountAllUnder } from './mounts.js';
import { containerdConfig, type CniSettings } from './containerd-config.js';
import {
  containerdRelease,
  defaultContainerdVersion,
  MACHINE_RUNC,
  type ContainerdRelease,
  type ContainerdVersion,
} from './containerd-versions.js';
import { TMP_BASE } from './paths.js';

export interface PrivateContainerd {
  /** `unix:///abs/path/containerd.sock`, what a CRI client or `--container-runtime-endpoint` takes. */
  endpoint: string;
  socket: string;
  root: string;
  state: string;
  dir: string;
  /** The running daemon's pid (a new one after restart()). */
  readonly pid: number;
  snapshotter: 'overlayfs' | 'native';
  /** Which containerd runs, and its binaries. */
  release: ContainerdRelease;
  stop(): Promise<void>;
  /**
   * Stops the daemon alone (SIGTERM, as `systemctl restart` does, or SIGKILL) and starts it again on
   * the same config, root and state: containers keep running under their shims, as on a node.
   * `whileDown` runs between the two. Resolves once the CRI plugin answers again.
   */
  restart(o?: { signal?: 'SIGTERM' | 'SIGKILL'; whileDown?: () => Promise<void> | void }): Promise<void>;
  /** Runs the version's `ctr --address SOCK -n k8s.io ...args` and returns its stdout. */
  ctr(args: string[], opts?: { timeoutMs?: number }): Promise<string>;
  /** The last lines of the daemon's log, for a test that failed. */
  logTail(lines?: number): string;
}

export interface StartContainerdOptions {
  /** Which containerd: the machine's 1.6, trixie's 1.7, sid's 2.1; default BOOTLET_TEST_CONTAINERD, else 1.6. */
  version?: ContainerdVersion;
  /** The runc binary the runtime runs (its options' BinaryName); default bookworm's /usr/sbin/runc. */
  runtimeBinary?: string;
  /** Directory to hold everything; default a fresh one under .tmp/. */
  dir?: string;
  /** Part of the default dir name, to tell instances apart. */
  name?: string;
  /** Image the CRI plugin uses for sandboxes. */
  sandboxImage?: string;
  /**
   * Kept across runs (`npm run up`): not removed by cleanupStaleContainerds when the process that
   * started it exits.
   */
  persistent?: boolean;
  /** Force a snapshotter; default overlayfs when an overlay mount works here, else native. */
  snapshotter?: 'overlayfs' | 'native';
  /** How long to wait for the socket and the CRI plugin; default 90 s. */
  startTimeoutMs?: number;
  /** runc's systemd cgroup driver (`SystemdCgroup = true`); needs a systemd to talk to. */
  systemdCgroup?: boolean;
  /** A command that runs containerd, e.g. nsenter into the namespaces of a test systemd. */
  wrap?: string[];
  /**
   * A real pod network (Debian's containernetworking-plugins: bridge, host-local, portmap,
   * loopback). Without it the runtime has a network that refuses every pod-network sandbox, so
   * that NetworkReady is true (the Node Ready) and no CNI plugin ever runs in the machine's network.
   */
  podNetwork?: PodNetworkOptions;
}

export interface PodNetworkOptions {
  /**
   * `nsenter --net=` path of a network namespace the test made (dev/netns.ts): containerd runs in
   * it, so the bridge, veths and iptables rules exist only there.
   */
  netnsPath: string;
  /**
   * The bridge's range, written as the CNI config at start (NetworkReady at once). Without it only
   * containerd's conf_template is there: NetworkReady stays false until UpdateRuntimeConfig brings
   * a pod CIDR, which containerd writes into the config it then loads.
   */
  subnet?: string;
}

/** Where Debian's containernetworking-plugins puts the plugins. */
export const DEBIAN_CNI_BIN_DIR = '/usr/lib/cni';
/** The bridge the test network makes (inside the test's network namespace only). */
export const TEST_BRIDGE = 'bootlet0';

/** What a running instance writes about itself, so a later run can clean it up after a crash. */
interface InstanceRecord {
  pid: number;
  ownerPid: number;
  /** Start time of the owner (clock ticks since boot), so a recycled pid is not taken for it. */
  ownerStart: number;
  persistent: boolean;
  dir: string;
  socketDir: string;
  socket: string;
  root: string;
  state: string;
  startedAt: string;
  /** The version's ctr, for a cleanup by a later run (absent in records of older checkouts: the machine's). */
  ctr?: string;
  /** The CNI network's name, unique to the instance: libcni's cache files under /var/lib/cni carry it. */
  cniNetwork?: string;
}

export const RECORD_FILE = 'bootlet-containerd.json';
export const K8S_NAMESPACE = 'k8s.io';
const DEFAULT_SANDBOX_IMAGE = 'bootlet.local/pause:3.10';
/** sun_path is 108 bytes including the NUL; leave room for the `.ttrpc` suffix containerd adds. */
const MAX_SOCKET_PATH = 100;

export async function startContainerd(opts: StartContainerdOptions = {}): Promise<PrivateContainerd> {
  await cleanupStaleContainerds();
  const name = (opts.name ?? 'test').replace(/[^a-zA-Z0-9_.-]/g, '-').slice(0, 24);
  const dir = path.resolve(opts.dir ?? path.join(TMP_BASE, `containerd-${name}-${randomBytes(4).toString('hex')}`));
  fs.mkdirSync(dir, { recursive: true });

  let socketDir = dir;
  if (path.join(dir, 'containerd.sock').length > MAX_SOCKET_PATH) {
    socketDir = fs.mkdtempSync('/tmp/bootlet-cd-');
  }
  const socket = path.join(socketDir, 'containerd.sock');
  const root = path.join(dir, 'root');
  const state = path.join(dir, 'state');
  for (const d of [root, state, path.join(dir, 'opt'), path.join(dir, 'cni', 'bin'), path.join(dir, 'cni', 'net.d')]) {
    fs.mkdirSync(d, { recursive: true });
  }
  const snapshotter =
    opts.snapshotter ??
    (process.env.BOOTLET_SNAPSHOTTER === 'native' || !(await overlayWorks(dir)) ? 'native' : 'overlayfs');
  const cniNetwork = `bootlet-${path
    .basename(dir)
    .replace(/[^a-zA-Z0-9-]/g, '-')
    .slice(-40)}`;
  const cni = writeCniConfig(dir, cniNetwork, opts.podNetwork);
  const release = await containerdRelease(opts.version ?? defaultContainerdVersion());
  fs.writeFileSync(
    path.join(dir, 'config.toml'),
    containerdConfig({
      configVersion: release.configVersion,
      runtimeBinary: opts.runtimeBinary ?? MACHINE_RUNC,
      socket,
      root,
      state,
      dir,
      snapshotter,
      sandboxImage: opts.sandboxImage ?? DEFAULT_SANDBOX_IMAGE,
      systemdCgroup: opts.systemdCgroup ?? false,
      cni,
    }),
  );

  const logPath = path.join(dir, 'containerd.log');
  const argv = [
    release.containerd,
    '--config',
    path.join(dir, 'config.toml'),
    '--address',
    socket,
    '--root',
    root,
    '--state',
    state,
  ];
  const wrap = [
    ...(opts.podNetwork ? ['nsenter', `--net=${opts.podNetwork.netnsPath}`, '--'] : []),
    ...(opts.wrap ?? []),
  ];
  // The version's own shim first: containerd finds `containerd-shim-runc-v2` on its PATH.
  const env = { ...process.env, PATH: `${release.binDir}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` };
  const spawned = spawnDaemon([...wrap, ...argv], dir, logPath, env);

  const record: InstanceRecord = {
    pid: spawned.pid,
    ownerPid: process.pid,
    ownerStart: processStartTime(process.pid),
    persistent: opts.persistent ?? false,
    dir,
    socketDir,
    socket,
    root,
    state,
    startedAt: new Date().toISOString(),
    cniNetwork: opts.podNetwork ? cniNetwork : undefined,
    ctr: release.ctr,
  };
  const writeRecord = (): void => fs.writeFileSync(path.join(dir, RECORD_FILE), JSON.stringify(record, null, 2));
  writeRecord();

  const ctr = (args: string[], o: { timeoutMs?: number } = {}): Promise<string> =>
    run(release.ctr, ['--address', socket, '-n', K8S_NAMESPACE, ...args], { timeoutMs: o.timeoutMs ?? 120_000 });

  const startTimeoutMs = opts.startTimeoutMs ?? 90_000;
  let current = spawned;
  const instance: PrivateContainerd = {
    endpoint: `unix://${socket}`,
    socket,
    root,
    state,
    dir,
    get pid() {
      return record.pid;
    },
    snapshotter,
    release,
    ctr,
    logTail: (lines) => tail(logPath, lines),
    stop: () => stopInstance(record),
    async restart(o = {}) {
      const pid = record.pid;
      try {
        process.kill(pid, o.signal ?? 'SIGTERM');
      } catch {
        /* already gone */
      }
      const deadline = Date.now() + 15_000;
      while (isAlive(pid) && Date.now() < deadline) await sleep(20);
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      while (isAlive(pid)) await sleep(20);
      await o.whileDown?.();
      current = spawnDaemon([...wrap, ...argv], dir, logPath, env);
      record.pid = current.pid;
      writeRecord();
      await waitForCri(socket, logPath, current, startTimeoutMs, record);
    },
  };
  await waitForCri(socket, logPath, current, startTimeoutMs, record);
  return instance;
}

interface SpawnedDaemon {
  pid: number;
  /** Set once the daemon has exited. */
  exited?: string;
}

function spawnDaemon(command: string[], cwd: string, logPath: string, env: NodeJS.ProcessEnv): SpawnedDaemon {
  const logFd = fs.openSync(logPath, 'a');
  // detached: Node calls setsid() in the child, so containerd gets its own session and process
  // group (what `setsid containerd ...` does) and the spawned pid is containerd's own; a Ctrl-C
  // in the terminal of a test run does not reach it, stop() does.
  const [cmd, ...args] = command as [string, ...string[]];
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', logFd, logFd], cwd, env });
  fs.closeSync(logFd);
  const pid = child.pid;
  if (!pid) throw new Error(`could not spawn containerd: ${tail(logPath)}`);
  child.unref();
  const d: SpawnedDaemon = { pid };
  child.on('exit', (code, sig) => {
    d.exited = `containerd exited early (code ${code}, signal ${sig})`;
  });
  return d;
}

/** Waits until the CRI plugin of the daemon on `socket` reports ok; stops the instance on failure. */
async function waitForCri(
  socket: string,
  logPath: string,
  daemon: SpawnedDaemon,
  timeoutMs: number,
  record: InstanceRecord,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    if (daemon.exited) {
      await stopInstance(record);
      throw new Error(`${daemon.exited}; log ${logPath}:\n${tail(logPath)}`);
    }
    try {
      const plugins = await run(record.ctr ?? 'ctr', ['--address', socket, 'plugins', 'ls'], { timeoutMs: 10_000 });
      const cri = plugins.split('\n').find((l) => /\bio\.containerd\.grpc\.v1\s+cri\b/.test(l));
      if (cri && /\bok\s*$/.test(cri)) return;
      last = cri ? `cri plugin: ${cri.trim()}` : 'cri plugin not listed yet';
      if (cri && /\berror\s*$/.test(cri)) {
        await stopInstance(record);
        throw new Error(`containerd's CRI plugin failed to load; log ${logPath}:\n${tail(logPath)}`);
      }
    } catch (e) {
      if (!(e instanceof CommandError)) throw e;
      last = e.message;
    }
    if (Date.now() > deadline) {
      await stopInstance(record);
      throw new Error(`containerd did not get ready at ${socket} (last: ${last}); log ${logPath}:\n${tail(logPath)}`);
    }
    await sleep(100);
  }
}

/**
 * Kills, unmounts and removes private containerds whose starting process is gone (a crashed or
 * interrupted earlier run). Instances started with `persistent` are left alone.
 */
export async function cleanupStaleContainerds(base: string = TMP_BASE): Promise<string[]> {
  const cleaned: string[] = [];
  if (!fs.existsSync(base)) return cleaned;
  for (const entry of fs.readdirSync(base)) {
    if (!entry.startsWith('containerd-')) continue;
    const dir = path.join(base, entry);
    const record = readRecord(dir);
    if (!record) {
      // A dir without a record is a start that died before writing it, or a half-removed one.
      const age = Date.now() - statMtime(dir);
      if (age > 60_000) {
        await unmountAllUnder(dir);
        fs.rmSync(dir, { recursive: true, force: true });
        cleaned.push(dir);
      }
      continue;
    }
    if (record.persistent) continue;
    if (isAlive(record.ownerPid) && processStartTime(record.ownerPid) === record.ownerStart) continue;
    await stopInstance(record);
    cleaned.push(dir);
  }
  return cleaned;
}

/** Stops an instance that a record describes; also used by `npm run up -- --down`. */
export async function stopContainerdAt(dir: string): Promise<boolean> {
  const record = readRecord(dir);
  if (!record) return false;
  await stopInstance(record);
  return true;
}

function readRecord(dir: string): InstanceRecord | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, RECORD_FILE), 'utf8')) as InstanceRecord;
  } catch {
    return undefined;
  }
}

function statMtime(p: string): number {
  try {
    return fs.statSync(p).mtimeMs;
  } catch {
    return 0;
  }
}

const stopping = new Map<string, Promise<void>>();

function stopInstance(r: InstanceRecord): Promise<void> {
  let p = stopping.get(r.dir);
  if (!p) {
    p = doStop(r).finally(() => stopping.delete(r.dir));
    stopping.set(r.dir, p);
  }
  return p;
}

async function doStop(r: InstanceRecord): Promise<void> {
  // The recorded pid, and any containerd serving our socket (should the record be off).
  const daemons = new Set(allPids().filter((p) => isOurContainerd(p, r.socket)));
  if (isAlive(r.pid) && isOurContainerd(r.pid, r.socket)) daemons.add(r.pid);
  const containerIds = listTaskIds(r.state);
  // Read before the tasks go: which of bootlet's pod cgroups hold this instance's containers.
  const podCgroups = podCgroupsHolding(containerIds);
  if (daemons.size > 0) await removeAllTasks(r.ctr ?? 'ctr', r.socket);
  const signal = (sig: NodeJS.Signals) => {
    for (const p of daemons) {
      try {
        process.kill(p, sig);
      } catch {
        /* already gone */
      }
    }
  };
  const anyAlive = () => [...daemons].some(isAlive);
  signal('SIGTERM');
  const deadline = Date.now() + 10_000;
  while (anyAlive() && Date.now() < deadline) await sleep(50);
  if (anyAlive()) {
    signal('SIGKILL');
    const hard = Date.now() + 5_000;
    while (anyAlive() && Date.now() < hard) await sleep(50);
  }
  if (anyAlive()) {
    // Never pull the root from under a running daemon.
    process.stderr.write(`bootlet dev: containerd ${[...daemons].join(',')} would not die; left ${r.dir}\n`);
    return;
  }
  // Shims outlive containerd; they and the containers under them are found by our socket path.
  await killShimsOf(r.socket);
  const left = await unmountAllUnder(r.dir, r.root, r.state);
  removeCgroups(containerIds, podCgroups);
  fs.rmSync(path.join(r.dir, RECORD_FILE), { force: true });
  if (left.length === 0) fs.rmSync(r.dir, { recursive: true, force: true });
  else process.stderr.write(`bootlet dev: could not unmount ${left.join(', ')}; left ${r.dir}\n`);
  if (r.socketDir !== r.dir) fs.rmSync(r.socketDir, { recursive: true, force: true });
  if (r.cniNetwork) removeCniCache(r.cniNetwork, containerIds);
}

/**
 * libcni keeps each ADD's result under /var/lib/cni (not configurable in containerd 1.6), for our
 * network and containerd's own loopback one (`cni-loopback-<sandbox>-lo`); a DEL removes them, an
 * instance stopped by killing its tasks does not.
 */
function removeCniCache(network: string, sandboxIds: string[]): void {
  const ours = new Set(sandboxIds.map((id) => `cni-loopback-${id}-lo`));
  for (const d of ['/var/lib/cni/results', '/var/lib/cni/cache/results']) {
    let entries: string[] = [];
    try {
      entries = fs.readdirSync(d);
    } catch {
      continue;
    }
    for (const e of entries)
      if (e.startsWith(`${network}-`) || ours.has(e)) fs.rmSync(path.join(d, e), { force: true });
  }
}

/**
 * The CNI config of an instance. With a pod network: bridge + host-local (its store in the
 * instance's dir) + portmap, loopback being containerd's own; either the config itself or, without
 * a subnet, the template containerd fills from UpdateRuntimeConfig's pod CIDR. Without: a network
 * whose plugin does not exist, so NetworkReady is true and a pod-network sandbox fails at once.
 */
function writeCniConfig(dir: string, network: string, podNetwork: PodNetworkOptions | undefined): CniSettings {
  const confDir = path.join(dir, 'cni', 'net.d');
  if (!podNetwork) {
    const placeholder = { cniVersion: '0.4.0', name: network, plugins: [{ type: 'bootlet-no-pod-network' }] };
    fs.writeFileSync(
      path.join(confDir, '10-bootlet-no-pod-network.conflist'),
      JSON.stringify(placeholder, null, 2) + '\n',
    );
    return { binDir: path.join(dir, 'cni', 'bin'), confDir, confTemplate: '' };
  }
  const conflist = (subnet: string): string =>
    JSON.stringify(
      {
        cniVersion: '0.4.0',
        name: network,
        plugins: [
          {
            type: 'bridge',
            bridge: TEST_BRIDGE,
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet }]],
              routes: [{ dst: '0.0.0.0/0' }],
              dataDir: path.join(dir, 'cni', 'ipam'),
            },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      },
      null,
      2,
    ) + '\n';
  if (podNetwork.subnet) {
    fs.writeFileSync(path.join(confDir, '10-bootlet-test.conflist'), conflist(podNetwork.subnet));
    return { binDir: DEBIAN_CNI_BIN_DIR, confDir, confTemplate: '' };
  }
  // containerd 1.6 executes this as a Go text/template with .PodCIDR (the first of the CIDRs sent).
  const template = path.join(dir, 'cni', 'conf-template.conflist');
  fs.writeFileSync(template, conflist('{{.PodCIDR}}'));
  return { binDir: DEBIAN_CNI_BIN_DIR, confDir, confTemplate: template };
}

/** Best effort through ctr: kill every task, delete it, delete its container and snapshot. */
async function removeAllTasks(ctrPath: string, socket: string): Promise<void> {
  const ctr = (args: string[]) =>
    tryRun(ctrPath, ['--address', socket, '-n', K8S_NAMESPACE, ...args], { timeoutMs: 20_000 });
  const tasks = (await ctr(['tasks', 'ls', '-q'])) ?? '';
  const ids = tasks
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  await Promise.all(ids.map((id) => ctr(['tasks', 'kill', '-s', 'SIGKILL', id])));
  await Promise.all(ids.map((id) => ctr(['tasks', 'rm', '-f', id])));
  const containers = ((await ctr(['containers', 'ls', '-q'])) ?? '')
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = 0; i < containers.length; i += 16) {
    await ctr(['containers', 'rm', ...containers.slice(i, i + 16)]);
  }
}

function readCmdline(pid: number): string[] {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

function isOurContainerd(pid: number, socket: string): boolean {
  const argv = readCmdline(pid);
  return argv.some((a) => a.endsWith('containerd')) && argv.includes(socket);
}

function allPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);
}

function statFields(pid: number): string[] {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return [];
  }
}

export function processStartTime(pid: number): number {
  return Number(statFields(pid)[19] ?? 0);
}

function parentOf(pid: number): number {
  return Number(statFields(pid)[1] ?? 0);
}

async function killShimsOf(socket: string): Promise<void> {
  const pids = allPids();
  const shims = pids.filter((p) => {
    const argv = readCmdline(p);
    if (!argv[0]?.includes('containerd-shim')) return false;
    const i = argv.indexOf('-address');
    return i >= 0 && argv[i + 1] === socket;
  });
  if (shims.length === 0) return;
  const children = new Map<number, number[]>();
  for (const p of pids) {
    const pp = parentOf(p);
    children.set(pp, [...(children.get(pp) ?? []), p]);
  }
  const victims: number[] = [];
  const walk = (p: number) => {
    victims.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  shims.forEach(walk);
  // Children first, so a shim does not restart or reap-race them.
  for (const p of victims.reverse()) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  const deadline = Date.now() + 5_000;
  while (victims.some(isAlive) && Date.now() < deadline) await sleep(50);
}

function listTaskIds(state: string): string[] {
  try {
    return fs.readdirSync(path.join(state, 'io.containerd.runtime.v2.task', K8S_NAMESPACE));
  } catch {
    return [];
  }
}

function cgroupHierarchies(): string[] {
  try {
    return [...fs.readdirSync('/sys/fs/cgroup').map((h) => path.join('/sys/fs/cgroup', h)), '/sys/fs/cgroup'];
  } catch {
    return [];
  }
}

/** bootlet's pod cgroups (cgroupfs driver, default root), relative to a hierarchy, holding any of `ids`. */
function podCgroupsHolding(ids: string[]): string[] {
  const out = new Set<string>();
  for (const h of cgroupHierarchies()) {
    for (const qos of ['kubepods', 'kubepods/burstable', 'kubepods/besteffort']) {
      let entries: string[] = [];
      try {
        entries = fs.readdirSync(path.join(h, qos)).filter((e) => e.startsWith('pod'));
      } catch {
        continue;
      }
      for (const pod of entries)
        if (ids.some((id) => fs.existsSync(path.join(h, qos, pod, id)))) out.add(path.join(qos, pod));
    }
  }
  return [...out];
}

/**
 * Empty cgroups runc made for our containers (cgroupfs driver), in every v1 hierarchy and v2: under
 * the runtime's default parent or in the pod cgroups that held them, which go too once empty.
 */
function removeCgroups(ids: string[], podCgroups: string[]): void {
  const rmdir = (d: string): void => {
    try {
      fs.rmdirSync(d);
    } catch {
      /* not there, or still busy */
    }
  };
  for (const h of cgroupHierarchies()) {
    for (const parent of [h, path.join(h, K8S_NAMESPACE), ...podCgroups.map((p) => path.join(h, p))])
      for (const id of ids) rmdir(path.join(parent, id));
    for (const p of podCgroups) rmdir(path.join(h, p));
  }
}

/** Whether overlayfs can be mounted with upper and work dirs on the filesystem holding `dir`. */
async function overlayWorks(dir: string): Promise<boolean> {
  const t = fs.mkdtempSync(path.join(dir, 'overlay-check-'));
  const [lower, upper, work, merged] = ['lower', 'upper', 'work', 'merged'].map((d) => path.join(t, d)) as [
    string,
    string,
    string,
    string,
  ];
  for (const d of [lower, upper, work, merged]) fs.mkdirSync(d);
  try {
    await run(
      'mount',
      ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${upper},workdir=${work}`, merged],
      {
        timeoutMs: 10_000,
      },
    );
    await run('umount', [merged], { timeoutMs: 10_000 });
    return true;
  } catch {
    return false;
  } finally {
    await unmountAllUnder(t);
    fs.rmSync(t, { recursive: true, force: true });
  }
}

function tail(file: string, lines = 40): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

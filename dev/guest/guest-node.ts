// A booted test node: the cached Debian 12 image (image.ts) under qemu with TCG (no KVM on these
// machines), systemd as PID 1 on the unified cgroup hierarchy, and no network device at all. The
// host reaches it through two channels only: the guest agent on a virtio-serial port (commands)
// and a read-only 9p share (files: the .deb, image tarballs, fixtures), mounted at /mnt/host.
//
// Each node boots a qcow2 overlay of the image in its own directory under .tmp/, so the image is
// never written; poweroff() and boot() keep the overlay (a reboot), stop() kills qemu and removes
// it. A node whose test process died is removed by the next startGuestNode (or dev/cleanup.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import * as path from 'node:path';
import { processStartTime } from '../containerd.js';
import { isAlive, run, sleep } from '../exec.js';
import { TMP_BASE } from '../paths.js';
import { GuestAgentClient, GuestCommandError, type GuestResult } from './guest-agent-client.js';
import { guestImage, type GuestImage } from './image.js';

/** The kernel's command line: cgroup v2 only, the console on the first serial port. */
export const GUEST_KERNEL_ARGS = [
  'root=/dev/vda',
  'rw',
  'console=ttyS0',
  'systemd.unified_cgroup_hierarchy=1',
  // Speculation mitigations cost a great deal under emulation and protect nothing in a test guest.
  'mitigations=off',
  'quiet',
];
/** Where the host's share is mounted in the guest (customize.sh's fstab). */
export const GUEST_SHARE = '/mnt/host';
const RECORD = 'bootlet-guest.json';

export interface GuestNodeOptions {
  /** Part of the directory's name. */
  name?: string;
  memoryMiB?: number;
  cpus?: number;
  /** How long a boot may take until the agent answers; default 5 min (TCG). */
  bootTimeoutMs?: number;
  log?: (line: string) => void;
}

interface GuestRecord {
  ownerPid: number;
  ownerStart: number;
  qemuPid?: number;
}

export interface BootTimes {
  /** qemu started → the guest agent answered (ms). */
  agentMs: number;
  /** qemu started → `systemctl is-system-running --wait` returned (ms). */
  systemMs: number;
  /** What the guest's systemd says (`systemd-analyze`), e.g. "Startup finished in 4.1s (kernel) + 30s (userspace)". */
  analyze: string;
  state: string;
}

export interface GuestNode {
  readonly dir: string;
  /** The host directory the guest sees at GUEST_SHARE. */
  readonly share: string;
  readonly image: GuestImage;
  /** The last boot's times. */
  readonly boot: BootTimes;
  /** Runs argv in the guest. */
  exec(argv: string[], o?: { input?: string; timeoutMs?: number }): Promise<GuestResult>;
  /** Runs a bash script in the guest; its stdout, or a GuestCommandError. */
  sh(script: string, o?: { input?: string; timeoutMs?: number }): Promise<string>;
  /** Puts a host file into the share (a hard link when it can); its path in the guest. */
  put(file: string, name?: string): string;
  /** `systemctl poweroff` and waits for qemu to exit; the overlay stays. */
  poweroff(o?: { timeoutMs?: number }): Promise<void>;
  /** Boots again from the same overlay (after poweroff). */
  start(): Promise<BootTimes>;
  /** Kills qemu if it runs, removes the overlay and the directory. Never throws. */
  stop(): Promise<void>;
  /** The last lines of the serial console, for a test that failed. */
  consoleTail(lines?: number): string;
}

export async function startGuestNode(o: GuestNodeOptions = {}): Promise<GuestNode> {
  await cleanupStaleGuests();
  const log = o.log ?? (() => undefined);
  const image = await guestImage(log);
  const dir = path.join(TMP_BASE, `guest-${o.name ?? 'node'}-${randomBytes(3).toString('hex')}`);
  const share = path.join(dir, 'share');
  mkdirSync(share, { recursive: true });
  const record: GuestRecord = { ownerPid: process.pid, ownerStart: processStartTime(process.pid) };
  writeRecord(dir, record);
  const overlay = path.join(dir, 'overlay.qcow2');
  await run('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'raw', '-b', image.disk, overlay]);
  const node = new QemuGuest(dir, share, image, overlay, record, o, log);
  try {
    await node.start();
  } catch (err) {
    const tail = node.consoleTail(40);
    await node.stop();
    throw new Error(`${(err as Error).message}\n--- guest console ---\n${tail}`);
  }
  return node;
}

function writeRecord(dir: string, r: GuestRecord): void {
  writeFileSync(path.join(dir, RECORD), JSON.stringify(r));
}

class QemuGuest implements GuestNode {
  private qemu: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private agent: GuestAgentClient | undefined;
  private lastBoot: BootTimes | undefined;
  private boots = 0;

  constructor(
    readonly dir: string,
    readonly share: string,
    readonly image: GuestImage,
    private readonly overlay: string,
    private readonly record: GuestRecord,
    private readonly o: GuestNodeOptions,
    private readonly log: (line: string) => void,
  ) {}

  get boot(): BootTimes {
    if (!this.lastBoot) throw new Error('the guest has not booted');
    return this.lastBoot;
  }

  async start(): Promise<BootTimes> {
    if (this.qemu && this.qemu.exitCode === null && this.qemu.signalCode === null)
      throw new Error('the guest is running');
    this.boots++;
    const sock = path.join(this.dir, 'agent.sock');
    rmSync(sock, { force: true });
    const consoleLog = path.join(this.dir, `console-${this.boots}.log`);
    const args = [
      '-nodefaults',
      '-no-user-config',
      '-machine',
      'pc',
      '-accel',
      'tcg,thread=multi',
      '-cpu',
      'max',
      '-smp',
      String(this.o.cpus ?? 2),
      '-m',
      String(this.o.memoryMiB ?? 3072),
      '-display',
      'none',
      '-kernel',
      this.image.kernel,
      '-initrd',
      this.image.initrd,
      '-append',
      GUEST_KERNEL_ARGS.join(' '),
      '-drive',
      `file=${this.overlay},if=virtio,format=qcow2,cache=unsafe,discard=unmap`,
      '-serial',
      `file:${consoleLog}`,
      '-object',
      'rng-random,filename=/dev/urandom,id=rng0',
      '-device',
      'virtio-rng-pci,rng=rng0',
      '-device',
      'virtio-serial-pci',
      '-chardev',
      `socket,id=agent,path=${sock},server=on,wait=off`,
      '-device',
      'virtserialport,chardev=agent,name=org.bootlet.agent',
      '-virtfs',
      `local,path=${this.share},mount_tag=bootlet-share,security_model=none,readonly=on`,
      // No network device: -nodefaults gives none, and none is asked for.
      '-nic',
      'none',
    ];
    const qemuLog = openSync(path.join(this.dir, 'qemu.log'), 'a');
    const started = Date.now();
    const child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', qemuLog, qemuLog], detached: true });
    this.qemu = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    this.record.qemuPid = child.pid;
    writeRecord(this.dir, this.record);
    const deadline = started + (this.o.bootTimeoutMs ?? 300_000);
    while (!existsSync(sock)) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`qemu exited at once: ${readFileSync(path.join(this.dir, 'qemu.log'), 'utf8').slice(-2000)}`);
      if (Date.now() > deadline) throw new Error('qemu made no agent socket');
      await sleep(100);
    }
    this.agent = await GuestAgentClient.connect(sock);
    // Written now, answered once the guest agent opens its port in the booted guest.
    const hello = await Promise.race([
      this.agent.exec(['true'], { timeoutMs: 10_000 }),
      sleep(deadline - Date.now()).then(() => undefined),
      this.exited.then(() => undefined),
    ]);
    if (!hello) throw new Error(`the guest did not boot within ${Math.round((deadline - started) / 1000)} s`);
    const agentMs = Date.now() - started;
    const running = await this.agent.exec(['systemctl', 'is-system-running', '--wait'], {
      timeoutMs: Math.max(10_000, deadline - Date.now()),
    });
    const systemMs = Date.now() - started;
    const analyze = (await this.agent.exec(['systemd-analyze'])).stdout.split('\n')[0] ?? '';
    this.lastBoot = { agentMs, systemMs, analyze, state: running.stdout.trim() };
    this.log(
      `guest booted: agent after ${(agentMs / 1000).toFixed(1)} s, ${this.lastBoot.state} after ${(systemMs / 1000).toFixed(1)} s (${analyze})`,
    );
    return this.lastBoot;
  }

  exec(argv: string[], o: { input?: string; timeoutMs?: number } = {}): Promise<GuestResult> {
    if (!this.agent) return Promise.reject(new Error('the guest is not running'));
    return this.agent.exec(argv, o);
  }

  async sh(script: string, o: { input?: string; timeoutMs?: number } = {}): Promise<string> {
    const r = await this.exec(['bash', '-euo', 'pipefail', '-c', script], o);
    if (r.code !== 0) throw new GuestCommandError(script.length > 200 ? script.slice(0, 200) + '…' : script, r);
    return r.stdout;
  }

  put(file: string, name = path.basename(file)): string {
    const to = path.join(this.share, name);
    mkdirSync(path.dirname(to), { recursive: true });
    rmSync(to, { force: true });
    try {
      linkSync(file, to);
    } catch {
      copyFileSync(file, to);
    }
    return path.posix.join(GUEST_SHARE, name);
  }

  async poweroff(o: { timeoutMs?: number } = {}): Promise<void> {
    // The answer may never come: the guest goes down.
    void this.exec(['systemctl', 'poweroff', '--no-block']).catch(() => undefined);
    const ok = await Promise.race([this.exited.then(() => true), sleep(o.timeoutMs ?? 300_000).then(() => false)]);
    this.agent?.close();
    this.agent = undefined;
    if (!ok) throw new Error('the guest did not power off');
  }

  async stop(): Promise<void> {
    this.agent?.close();
    this.agent = undefined;
    const q = this.qemu;
    if (q?.pid && q.exitCode === null && q.signalCode === null) {
      try {
        process.kill(q.pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
      await Promise.race([this.exited, sleep(10_000)]);
    }
    if (process.env.BOOTLET_KEEP_GUEST) {
      this.log(`guest directory kept (BOOTLET_KEEP_GUEST): ${this.dir}`);
      return;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  consoleTail(lines = 60): string {
    const file = path.join(this.dir, `console-${this.boots}.log`);
    try {
      return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }
}

/** Removes the guests whose test process is gone: kills their qemu, deletes their directory. */
export async function cleanupStaleGuests(base: string = TMP_BASE): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith('guest-'));
  } catch {
    return removed;
  }
  for (const n of names) {
    const dir = path.join(base, n);
    let r: GuestRecord;
    try {
      r = JSON.parse(readFileSync(path.join(dir, RECORD), 'utf8')) as GuestRecord;
    } catch {
      continue;
    }
    if (isAlive(r.ownerPid) && processStartTime(r.ownerPid) === r.ownerStart) continue;
    if (r.qemuPid && isAlive(r.qemuPid) && isQemuOf(r.qemuPid, dir)) {
      try {
        process.kill(r.qemuPid, 'SIGKILL');
      } catch {
        /* gone */
      }
      for (let i = 0; i < 50 && isAlive(r.qemuPid); i++) await sleep(100);
    }
    rmSync(dir, { recursive: true, force: true });
    removed.push(dir);
  }
  return removed;
}

/** A recycled pid is not taken for the guest's qemu: its command line names the guest's overlay. */
function isQemuOf(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(path.join(dir, 'overlay.qcow2'));
  } catch {
    return false;
  }
}

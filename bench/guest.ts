// `npm run bench:guest`: boot → control plane running on the booted test node (dev/guest: Debian 12
// under qemu, systemd, cgroup v2, containerd 2.1, bootlet's .deb, kubeadm 1.37's files), once with
// bootlet starting the four static pods at boot and once with the same pods started by direct CRI
// calls (bench/guest-raw-start.ts, run by a unit ordered after containerd) in the same guest.
//
// Every time is read inside the guest on its monotonic clock (0 = the kernel's start): systemd's unit
// timestamps, and containerd's own log lines for each CRI call's receipt and return (journald's
// monotonic stamp). bootlet's share is its own time between the runtime's calls: from its process
// start to the last StartContainer's return, less the time during which a start call of one of the
// four pods was in containerd's hands. Run once (each round is a power-off and a boot under TCG).
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { loadavg } from 'node:os';
import { startGuestNode, GUEST_SHARE, type GuestNode } from '../dev/guest/guest-node.js';
import { REPO_ROOT, TMP_BASE } from '../dev/paths.js';
import { fillShare, installKubeadmFiles, prepareNode, writeManifests } from '../test/node/kubeadm-guest.js';
import { KUBEADM_NODE } from '../test/support/kubeadm-node.js';
import type { PodList } from 'kubernetes-types/core/v1';

const VERSION = '1.37';
const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
const STANDALONE = ['--kubeconfig=', '--bootstrap-kubeconfig='];
const log = (line: string) => console.log(`[bench:guest] ${line}`);

interface CallMark {
  pod: string;
  call: 'RunPodSandbox' | 'CreateContainer' | 'StartContainer';
  /** Seconds since the guest's boot (monotonic). */
  start: number;
  end?: number;
}

interface BootFigures {
  kernelAndUserspace: string;
  containerdReady: number;
  clientStart: number;
  firstCall: number;
  controlPlaneRunning: number;
  /** Time with a start call of one of the four pods in containerd's hands, between the first call and the last return. */
  inRuntime: number;
}

async function bundleRawStarter(): Promise<string> {
  const out = path.join(TMP_BASE, 'guest-bench', 'raw-start.cjs');
  mkdirSync(path.dirname(out), { recursive: true });
  await build({
    entryPoints: [path.join(REPO_ROOT, 'bench', 'guest-raw-start.ts')],
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    outfile: out.replace(/\.cjs$/, '.mjs'),
    banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
    define: { __BOOTLET_VERSION__: '"bench"' },
    logLevel: 'warning',
  });
  return out.replace(/\.cjs$/, '.mjs');
}

/** containerd's CRI lines of this boot, as marks of the four pods' start calls. */
async function criMarks(g: GuestNode): Promise<CallMark[]> {
  const lines = (await g.sh('journalctl -b -u containerd --no-pager -q -o json', { timeoutMs: 300_000 }))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { MESSAGE?: string; __MONOTONIC_TIMESTAMP: string })
    .map((e) => ({
      t: Number(e.__MONOTONIC_TIMESTAMP) / 1e6,
      msg: /msg="((?:[^"\\]|\\.)*)"/.exec(e.MESSAGE ?? '')?.[1]?.replace(/\\"/g, '"') ?? '',
    }));
  const marks: CallMark[] = [];
  for (const c of COMPONENTS) {
    const name = `${c}-${KUBEADM_NODE.name}`;
    const run = lines.find(
      (l) => l.msg.startsWith('RunPodSandbox for') && l.msg.includes(`Name:${name},`) && !l.msg.includes('returns'),
    );
    const ret = lines.find(
      (l) =>
        l.msg.startsWith('RunPodSandbox for') &&
        l.msg.includes(`Name:${name},`) &&
        l.msg.includes('returns sandbox id'),
    );
    if (!run || !ret) continue;
    marks.push({ pod: c, call: 'RunPodSandbox', start: run.t, end: ret.t });
    const sandbox = /returns sandbox id "([0-9a-f]+)"/.exec(ret.msg)![1];
    const cc = lines.find(
      (l) => l.msg.startsWith(`CreateContainer within sandbox "${sandbox}"`) && !l.msg.includes('returns'),
    );
    const ccr = lines.find(
      (l) => l.msg.startsWith(`CreateContainer within sandbox "${sandbox}"`) && l.msg.includes('returns container id'),
    );
    if (!cc || !ccr) continue;
    marks.push({ pod: c, call: 'CreateContainer', start: cc.t, end: ccr.t });
    const id = /returns container id "([0-9a-f]+)"/.exec(ccr.msg)![1];
    const sc = lines.find((l) => l.msg === `StartContainer for "${id}"`);
    const scr = lines.find((l) => l.msg === `StartContainer for "${id}" returns successfully`);
    if (sc) marks.push({ pod: c, call: 'StartContainer', start: sc.t, end: scr?.t });
  }
  return marks;
}

/** The length of the union of the calls' intervals. */
function busy(marks: readonly CallMark[]): number {
  const iv = marks
    .filter((m) => m.end !== undefined)
    .map((m) => [m.start, m.end!] as const)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let cur: [number, number] | undefined;
  for (const [s, e] of iv) {
    if (!cur || s > cur[1]) {
      if (cur) total += cur[1] - cur[0];
      cur = [s, e];
    } else cur[1] = Math.max(cur[1], e);
  }
  if (cur) total += cur[1] - cur[0];
  return total;
}

async function unitMono(g: GuestNode, unit: string, prop: string): Promise<number> {
  return Number((await g.sh(`systemctl show ${unit} -p ${prop} --value`)).trim()) / 1e6;
}

async function figures(g: GuestNode, client: string): Promise<BootFigures> {
  const marks = await criMarks(g);
  const ends = marks.filter((m) => m.call === 'StartContainer' && m.end !== undefined).map((m) => m.end!);
  if (ends.length !== COMPONENTS.length)
    throw new Error(`only ${ends.length} of the four started: ${JSON.stringify(marks)}`);
  return {
    kernelAndUserspace: (await g.sh('systemd-analyze')).split('\n')[0]!.replace(/^Startup finished in /, ''),
    containerdReady: await unitMono(g, 'containerd.service', 'ActiveEnterTimestampMonotonic'),
    clientStart: await unitMono(g, client, 'ExecMainStartTimestampMonotonic'),
    firstCall: Math.min(...marks.map((m) => m.start)),
    controlPlaneRunning: Math.max(...ends),
    inRuntime: busy(marks),
  };
}

async function allRunning(g: GuestNode): Promise<void> {
  const deadline = Date.now() + 900_000;
  for (;;) {
    const out = await g.exec(['bootlet', 'pods', '-o', 'json']);
    if (out.code === 0) {
      const pods = (JSON.parse(out.stdout) as PodList).items;
      if (
        COMPONENTS.every((c) =>
          pods.some(
            (p) => p.metadata?.name === `${c}-${KUBEADM_NODE.name}` && p.status?.containerStatuses?.[0]?.state?.running,
          ),
        )
      )
        return;
    }
    if (Date.now() > deadline) throw new Error('the control plane did not come up');
    await new Promise((r) => setTimeout(r, 3000));
  }
}

// On the guest's own disk, as bootlet's executable is: read from the 9p share at boot, the Node
// binary alone took the raw starter seconds longer under TCG.
const RAW_DIR = '/opt/bench-raw';

const RAW_UNIT = `[Unit]
Description=bench: the control plane's pods by direct CRI calls
After=containerd.service
Requires=containerd.service

[Service]
Type=oneshot
ExecStart=${RAW_DIR}/node ${RAW_DIR}/raw-start.mjs

[Install]
WantedBy=multi-user.target
`;

const g = await startGuestNode({ name: 'bench', log });
try {
  await fillShare(g);
  await prepareNode(g);
  g.put(path.join(REPO_ROOT, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node'), 'node');
  g.put(await bundleRawStarter(), 'raw-start.mjs');
  await g.sh(`dpkg -i ${GUEST_SHARE}/bootlet.deb >/dev/null`, { timeoutMs: 600_000 });
  await installKubeadmFiles(g, VERSION, { extraArgs: STANDALONE });
  await writeManifests(g, VERSION);
  await g.sh('systemctl restart kubelet', { timeoutMs: 900_000 });
  await allRunning(g);
  log('control plane up; the bootlet round: power off, boot');

  const t0 = Date.now();
  await g.poweroff();
  await g.start();
  await allRunning(g);
  const wallBootlet = (Date.now() - t0) / 1000;
  const withBootlet = await figures(g, 'bootlet.service');
  // Where bootlet's own time before its first call goes: its lines of this boot, stamped on the guest's clock.
  if (process.env.BENCH_GUEST_TRACE)
    console.log(
      await g.sh(
        `journalctl -b -u bootlet -o short-monotonic --no-pager -q | awk '$2+0 <= ${withBootlet.firstCall.toFixed(3)}+0.5' | cut -c1-400`,
        { timeoutMs: 120_000 },
      ),
    );

  log('the raw round: bootlet off, the same four pods by direct CRI calls at boot');
  await g.sh('rm -f /etc/kubernetes/manifests/*.yaml');
  for (let i = 0; ; i++) {
    const left = (await g.sh('ctr -n k8s.io tasks ls -q | wc -l')).trim();
    if (left === '0') break;
    if (i > 200) throw new Error('bootlet did not stop the control plane');
    await new Promise((r) => setTimeout(r, 3000));
  }
  await g.sh('systemctl disable --now bootlet.service');
  await g.sh(
    `install -D -m 0755 ${GUEST_SHARE}/node ${RAW_DIR}/node && install -m 0644 ${GUEST_SHARE}/raw-start.mjs ${RAW_DIR}/raw-start.mjs`,
    { timeoutMs: 300_000 },
  );
  await g.sh('install -m 0644 /dev/stdin /etc/systemd/system/raw-start.service && systemctl enable raw-start.service', {
    input: RAW_UNIT,
  });
  await writeManifests(g, VERSION);
  const t1 = Date.now();
  await g.poweroff();
  await g.start();
  // A oneshot: inactive once it has run (the unit's result says whether it succeeded).
  for (let i = 0; ; i++) {
    // By name: `--value` prints the properties in systemd's order, not the order asked (Result first).
    const props = new Map(
      (await g.sh('systemctl show raw-start -p ActiveState -p Result'))
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
    );
    const u = [props.get('ActiveState') ?? '', props.get('Result') ?? ''];
    if (u[0] === 'inactive' || u[0] === 'failed') {
      if (u[1] !== 'success')
        throw new Error(
          `raw-start.service: ${u.join(' ')}: ${await g.sh('journalctl -b -u raw-start --no-pager -q | tail -20')}`,
        );
      break;
    }
    if (i > 300)
      throw new Error(
        `raw-start.service did not finish (${u.join(' ')}): ${await g.sh('journalctl -b -u raw-start -u containerd --no-pager -q | tail -40')}`,
      );
    await new Promise((r) => setTimeout(r, 3000));
  }
  const wallRaw = (Date.now() - t1) / 1000;
  const raw = await figures(g, 'raw-start.service');

  const row = (what: string, b: number | string, r: number | string) =>
    console.log(`${what.padEnd(58)} ${String(b).padStart(10)} ${String(r).padStart(10)}`);
  const s = (x: number) => x.toFixed(2);
  console.log(
    `\nboot → control plane running, in the guest (TCG, 2 vCPUs), s since the kernel's start; host load ${loadavg()[0]!.toFixed(1)}`,
  );
  row('', 'bootlet', 'direct CRI');
  row('systemd-analyze', '', '');
  console.log(`  bootlet: ${withBootlet.kernelAndUserspace}\n  raw:     ${raw.kernelAndUserspace}`);
  row('containerd.service active', s(withBootlet.containerdReady), s(raw.containerdReady));
  row('client process started (bootlet / the raw starter)', s(withBootlet.clientStart), s(raw.clientStart));
  row('first RunPodSandbox', s(withBootlet.firstCall), s(raw.firstCall));
  row(
    'control plane running (last StartContainer returned)',
    s(withBootlet.controlPlaneRunning),
    s(raw.controlPlaneRunning),
  );
  row('  of which start calls in containerd', s(withBootlet.inRuntime), s(raw.inRuntime));
  const own = (f: BootFigures) => f.controlPlaneRunning - f.clientStart - f.inRuntime;
  row("client's own time (process start → running, less the calls)", s(own(withBootlet)), s(own(raw)));
  row('qemu start → control plane seen running from the host (wall)', s(wallBootlet), s(wallRaw));
} finally {
  await g.stop();
}

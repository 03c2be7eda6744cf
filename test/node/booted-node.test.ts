// bootlet on a booted node (`npm run test:node`): a Debian 12 guest under qemu with systemd as PID 1,
// cgroup v2 only and no network, Debian's containerd 2.1 configured as kubeadm documents it, bootlet's
// own .deb installed with dpkg -i, and kubeadm 1.35–1.37's files. The tests run in order on one guest:
// install, the control plane from kubeadm's files, its cgroups, the journal, restarts of the service,
// the other kubeadm versions, then a power-off through logind and the next boot.
import type { Pod, PodList } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGuestNode, GUEST_SHARE, type GuestNode } from '../../dev/guest/guest-node.js';
import { cpuSharesToWeight } from '../../src/cm/cgroup-manager.js';
import { resourceConfigForPod } from '../../src/cm/pod-resources.js';
import { qosClass } from '../../src/k8s/qos.js';
import { milliCpuToShares, MIN_CPU_SHARES } from '../../src/cm/cpu-shares.js';
import { podCpuRequestMilli } from '../../src/cm/pod-resources.js';
import { KUBEADM_NODE } from '../support/kubeadm-node.js';
import type { KubeadmVersion } from '../support/kubeadm-versions.js';
import { waitFor } from '../support/wait.js';
import { fillShare, installKubeadmFiles, prepareNode, writeManifests } from './kubeadm-guest.js';

const COMPONENTS = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'];
/** An operator's own static pod beside the control plane: Guaranteed, so its cgroup has every limit. */
const GUARANTEED = `apiVersion: v1
kind: Pod
metadata:
  name: guaranteed
  namespace: default
spec:
  # No CNI on this node (a control plane's own pods use the host's network).
  hostNetwork: true
  terminationGracePeriodSeconds: 5
  containers:
  - name: sleeper
    image: bootlet.local/busybox:1.36
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    resources:
      limits:
        cpu: 250m
        memory: 64Mi
`;
/** The operator's overrides: no API server answers here (the control plane is stand-ins), so the node runs standalone. */
const STANDALONE = ['--kubeconfig=', '--bootstrap-kubeconfig='];
/**
 * Graceful node shutdown as an operator turns it on (kubeadm writes both as 0s). The critical pods' 120 s
 * leave each control-plane wave time to exit even on a loaded machine under TCG, where stopping a pod took
 * over 20 s at a load of 17 (a wave goes on when the previous one has exited, so an idle machine waits no longer); the short-period case (10 s against etcd's 30) is the unit tests' (stop-in-order.test.ts).
 */
const SHUTDOWN_CONFIG = { shutdownGracePeriod: '180s', shutdownGracePeriodCriticalPods: '120s' };

let g: GuestNode;
const timings: Record<string, number> = {};
const log = (line: string) => console.log(`[test:node] ${line}`);

async function podList(): Promise<Pod[]> {
  const out = await g.sh('bootlet pods -o json');
  return (JSON.parse(out) as PodList).items;
}

/** Every pod named, each with its one container running; returns the pods. */
async function allRunning(names: string[], timeoutMs = 600_000): Promise<Pod[]> {
  return waitFor(
    async () => {
      const pods = await podList();
      const ok = names.every((n) =>
        pods.some(
          (p) =>
            p.metadata?.name === `${n}-${KUBEADM_NODE.name}` &&
            (p.status?.containerStatuses ?? []).length > 0 &&
            p.status!.containerStatuses!.every((c) => c.state?.running && c.ready !== false),
        ),
      );
      return ok ? pods : undefined;
    },
    { timeoutMs, intervalMs: 3000, what: `${names.join(', ')} running` },
  );
}

/** The running containers the runtime holds: id → pid (`ctr tasks ls`). */
async function runningTasks(): Promise<Map<string, string>> {
  const out = await g.sh('ctr -n k8s.io tasks ls');
  const m = new Map<string, string>();
  for (const line of out.split('\n').slice(1)) {
    const [id, pid, status] = line.trim().split(/\s+/);
    if (id && status === 'RUNNING') m.set(id, pid!);
  }
  return m;
}

function containerIdOf(p: Pod): string {
  return (p.status?.containerStatuses?.[0]?.containerID ?? '').replace(/^containerd:\/\//, '');
}

async function readCgroup(dir: string, file: string): Promise<string> {
  return (await g.sh(`cat /sys/fs/cgroup${dir}/${file}`)).trim();
}

/** The systemd slice of a pod's cgroup, as the kubelet names it (kubepods-<qos>-pod<uid with _>.slice). */
function podSlice(p: Pod): string {
  const uid = p.metadata!.uid!.replaceAll('-', '_');
  const qos = qosClass(p);
  if (qos === 'Guaranteed') return `/kubepods.slice/kubepods-pod${uid}.slice`;
  const q = qos.toLowerCase();
  return `/kubepods.slice/kubepods-${q}.slice/kubepods-${q}-pod${uid}.slice`;
}

/** systemd's show of the unit: the fields asked for. */
async function unitShow(props: string[]): Promise<Record<string, string>> {
  const out = await g.sh(`systemctl show bootlet.service -p ${props.join(',')}`);
  return Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

/** `systemctl restart kubelet` as kubeadm's kubelet-start phase runs it; returns how long it took (ms). */
async function restartKubelet(): Promise<number> {
  const t0 = Date.now();
  await g.sh('systemctl restart kubelet', { timeoutMs: 600_000 });
  return Date.now() - t0;
}

async function startVersion(v: KubeadmVersion, config?: Record<string, string>): Promise<Pod[]> {
  log(`kubeadm ${v}: installing its files, then systemctl restart kubelet`);
  await installKubeadmFiles(g, v, { extraArgs: STANDALONE, config });
  await writeManifests(g, v);
  const ms = await restartKubelet();
  timings[`kubeadm ${v}: systemctl restart kubelet (READY)`] = ms;
  log(`kubeadm ${v}: systemctl restart kubelet returned after ${(ms / 1000).toFixed(1)} s`);
  const pods = await allRunning([...COMPONENTS, 'guaranteed']);
  log(`kubeadm ${v}: the control plane and the operator's pod run`);
  return pods;
}

describe('bootlet on a booted Debian 12 node (systemd, cgroup v2, containerd 2.1)', () => {
  beforeAll(async () => {
    const t0 = Date.now();
    g = await startGuestNode({ name: 'node', log });
    timings['boot: qemu → multi-user'] = g.boot.systemMs;
    await fillShare(g);
    await prepareNode(g);
    timings['node prepared (containerd configured, images imported)'] = Date.now() - t0;
  }, 1_800_000);

  afterAll(async () => {
    log(
      `timings: ${JSON.stringify(Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, `${(v / 1000).toFixed(1)} s`])))}`,
    );
    await g?.stop();
  }, 120_000);

  it('is the node the issue describes: systemd PID 1, cgroup v2 only, no network interface but lo', async () => {
    expect((await g.sh('stat -fc %T /sys/fs/cgroup')).trim()).toBe('cgroup2fs');
    expect((await g.sh('ps -p 1 -o comm=')).trim()).toBe('systemd');
    expect((await g.sh("ls /sys/class/net | tr '\\n' ' '")).trim()).toBe('lo');
    expect(await g.sh('containerd --version')).toMatch(/containerd\S* .*2\.1\./);
  });

  it('dpkg -i installs bootlet quietly; kubelet.service (the alias) is enabled', async () => {
    log('dpkg -i bootlet.deb');
    const r = await g.exec(['dpkg', '-i', `${GUEST_SHARE}/bootlet.deb`], { timeoutMs: 600_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/Could not execute systemctl/);
    // Only what enabling a unit always prints (deb-systemd-helper's systemctl enable).
    expect(r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('Created symlink '))).toEqual([]);
    expect((await g.exec(['systemctl', 'is-enabled', 'kubelet.service'])).code).toBe(0);
    const unit = await unitShow(['Names', 'Type', 'UnitFileState']);
    expect(unit.Names!.split(' ').sort()).toEqual(['bootlet.service', 'kubelet.service']);
    expect(unit.Type).toBe('notify');
    expect(unit.UnitFileState).toBe('enabled');
  });

  it("kubeadm 1.35: systemctl restart kubelet returns once the static pods run (Type=notify), with kubeadm's own drop-in and flags", async () => {
    await g.sh(
      'mkdir -p /etc/kubernetes/manifests && install -m 0644 /dev/stdin /etc/kubernetes/manifests/guaranteed.yaml',
      {
        input: GUARANTEED,
      },
    );
    const since = (await g.sh('date +%s')).trim();
    const pods = await startVersion('1.35');
    const unit = await unitShow(['ActiveState', 'SubState', 'DropInPaths', 'ExecMainPID']);
    expect(unit.ActiveState).toBe('active');
    expect(unit.SubState).toBe('running');
    // kubeadm's drop-in is read through the alias; bootlet's own sorts after it.
    expect(unit.DropInPaths).toContain('kubelet.service.d/10-kubeadm.conf');
    const cmdline = (await g.sh(`tr '\\0' ' ' </proc/${unit.ExecMainPID}/cmdline`)).trim();
    expect(cmdline).toContain('--config=/var/lib/kubelet/config.yaml');
    for (const c of COMPONENTS) {
      const p = pods.find((x) => x.metadata?.name === `${c}-${KUBEADM_NODE.name}`)!;
      expect(p.spec?.containers[0]?.image).toMatch(/:(v1\.35\.0|3\.6\.6-0)$/);
    }
    // An ordinary start: nothing at error priority, and the log is under the name kubeadm gives.
    expect((await g.sh(`journalctl -u kubelet --since @${since} --no-pager -q -p err`)).trim()).toBe('');
    const lines = await g.sh(`journalctl -u kubelet --since @${since} --no-pager -q -o cat`);
    expect(lines).toMatch(/Manifests read/);
    expect((await g.sh(`journalctl -xeu kubelet --no-pager -q | wc -l`)).trim()).not.toBe('0');
  }, 1_200_000);

  it("puts the pods into kubepods.slice with the kubelet's cgroup v2 values", async () => {
    const pods = await podList();
    const cpus = Number((await g.sh('nproc')).trim());
    expect(await readCgroup('/kubepods.slice', 'cpu.weight')).toBe(
      String(cpuSharesToWeight(milliCpuToShares(cpus * 1000))),
    );
    // Node allocatable enforced on kubepods (enforceNodeAllocatable: pods): the node's memory and PIDs.
    const memTotal = Number(/MemTotal:\s+(\d+) kB/.exec(await g.sh('cat /proc/meminfo'))![1]) * 1024;
    expect(Number(await readCgroup('/kubepods.slice', 'memory.max'))).toBe(Math.floor(memTotal / 4096) * 4096);
    const pids = Math.min(
      ...(await g.sh('cat /proc/sys/kernel/pid_max /proc/sys/kernel/threads-max')).trim().split('\n').map(Number),
    );
    expect(await readCgroup('/kubepods.slice', 'pids.max')).toBe(String(pids));
    expect(await readCgroup('/kubepods.slice/kubepods-besteffort.slice', 'cpu.weight')).toBe(
      String(cpuSharesToWeight(MIN_CPU_SHARES)),
    );
    const burstableMilli = pods
      .filter((p) => qosClass(p) === 'Burstable')
      .reduce((s, p) => s + podCpuRequestMilli(p), 0);
    expect(await readCgroup('/kubepods.slice/kubepods-burstable.slice', 'cpu.weight')).toBe(
      String(cpuSharesToWeight(milliCpuToShares(burstableMilli))),
    );
    const tasks = await runningTasks();
    for (const p of pods) {
      const slice = podSlice(p);
      const want = resourceConfigForPod(p, { enforceCpuLimits: true, podPidsLimit: -1 });
      expect(await readCgroup(slice, 'cpu.weight'), `${p.metadata?.name} cpu.weight`).toBe(
        String(cpuSharesToWeight(want.cpuShares!)),
      );
      const quota = want.cpuQuota !== undefined && want.cpuQuota > 0 ? String(want.cpuQuota) : 'max';
      expect(await readCgroup(slice, 'cpu.max'), `${p.metadata?.name} cpu.max`).toBe(`${quota} 100000`);
      expect(await readCgroup(slice, 'memory.max'), `${p.metadata?.name} memory.max`).toBe(
        want.memoryLimit ? String(want.memoryLimit) : 'max',
      );
      expect(await readCgroup(slice, 'pids.max')).toBe('max');
      // Memory QoS is off, as in the kubelet: no memory.min or memory.high of bootlet's.
      expect(await readCgroup(slice, 'memory.min')).toBe('0');
      expect(await readCgroup(slice, 'memory.high')).toBe('max');
      // The container runs inside its pod's slice (runc's scope under it).
      const pid = tasks.get(containerIdOf(p));
      expect(pid, `${p.metadata?.name} has a running task`).toBeDefined();
      const cg = (await g.sh(`cat /proc/${pid}/cgroup`)).trim();
      expect(cg.startsWith(`0::${slice}/`), `${p.metadata?.name}: ${cg}`).toBe(true);
    }
    // The Guaranteed pod has every limit: 250m and 64Mi.
    const guaranteed = pods.find((p) => p.metadata?.name === `guaranteed-${KUBEADM_NODE.name}`)!;
    expect(await readCgroup(podSlice(guaranteed), 'cpu.max')).toBe('25000 100000');
    expect(await readCgroup(podSlice(guaranteed), 'memory.max')).toBe(String(64 * 1024 * 1024));
  }, 300_000);

  it('systemctl restart kubelet and systemctl kill -s KILL kubelet change no container', async () => {
    const before = await runningTasks();
    log('systemctl restart kubelet, then systemctl kill -s KILL kubelet');
    const restartMs = await restartKubelet();
    timings['systemctl restart kubelet, pods running'] = restartMs;
    expect(await runningTasks()).toEqual(before);
    const { ExecMainPID: oldPid, NRestarts: restarts } = await unitShow(['ExecMainPID', 'NRestarts']);
    await g.sh('systemctl kill -s KILL kubelet');
    // Restart=always, RestartSec=10: systemd starts it again; READY once it adopted the pods.
    await waitFor(
      async () => {
        const u = await unitShow(['ExecMainPID', 'ActiveState', 'SubState', 'NRestarts']);
        return (
          u.ActiveState === 'active' && u.SubState === 'running' && u.ExecMainPID !== oldPid && u.NRestarts !== restarts
        );
      },
      { timeoutMs: 300_000, intervalMs: 2000, what: 'bootlet.service active again after SIGKILL' },
    );
    expect(await runningTasks()).toEqual(before);
  }, 900_000);

  for (const v of ['1.36', '1.37'] as const) {
    it(`kubeadm ${v}'s files start the control plane`, async () => {
      // kubeadm reset, then init with the next version: the old pods go first.
      await g.sh(
        'for c in etcd kube-apiserver kube-controller-manager kube-scheduler; do rm -f /etc/kubernetes/manifests/$c.yaml; done',
      );
      await waitFor(
        async () => {
          const pods = await podList();
          return !pods.some((p) => COMPONENTS.some((c) => p.metadata?.name === `${c}-${KUBEADM_NODE.name}`));
        },
        { timeoutMs: 600_000, intervalMs: 3000, what: 'the old control plane gone' },
      );
      await g.sh('rm -rf /var/lib/etcd/*');
      const last = v === '1.37';
      const pods = await startVersion(v, last ? SHUTDOWN_CONFIG : undefined);
      for (const c of COMPONENTS) {
        const p = pods.find((x) => x.metadata?.name === `${c}-${KUBEADM_NODE.name}`)!;
        expect(p.spec?.containers[0]?.image).toContain(c === 'etcd' ? 'etcd:3.6' : `:v${v}.0`);
      }
    }, 1_500_000);
  }

  it('systemctl poweroff stops the pods gracefully, in order, with etcd exiting cleanly; the next boot brings them back with the same data', async () => {
    const etcd = async (script: string) =>
      g.sh(`python3 - <<'EOF'
import json, base64, ssl, urllib.request
ctx = ssl.create_default_context(cafile='/etc/kubernetes/pki/etcd/ca.crt')
ctx.load_cert_chain('/etc/kubernetes/pki/etcd/healthcheck-client.crt', '/etc/kubernetes/pki/etcd/healthcheck-client.key')
def call(path, body):
    req = urllib.request.Request('https://127.0.0.1:2379' + path, data=json.dumps(body).encode(), method='POST')
    return json.load(urllib.request.urlopen(req, context=ctx, timeout=30))
b64 = lambda s: base64.b64encode(s.encode()).decode()
${script}
EOF`);
    await etcd("call('/v3/kv/put', {'key': b64('bootlet/test-node'), 'value': b64('before-poweroff')})");
    log('systemctl poweroff');
    const lockHeld = await g.sh(
      "systemd-inhibit --list --no-pager --no-legend | grep -c 'kubelet.*shutdown.*delay' || true",
    );
    expect(lockHeld.trim()).toBe('1');
    const before = await podList();
    const t0 = Date.now();
    await g.poweroff({ timeoutMs: 300_000 });
    timings['systemctl poweroff → guest down'] = Date.now() - t0;
    const t1 = Date.now();
    const boot = await g.start();
    const pods = await allRunning([...COMPONENTS, 'guaranteed'], 900_000);
    timings['boot → control plane running'] = Date.now() - t1;
    timings['boot → multi-user (second boot)'] = boot.systemMs;
    log(
      `second boot: multi-user after ${(boot.systemMs / 1000).toFixed(1)} s, control plane running after ${((Date.now() - t1) / 1000).toFixed(1)} s`,
    );

    // The previous boot's shutdown, as bootlet logged it (klog text; journald's time of each line).
    const records = (await g.sh('journalctl -b -1 -u kubelet --no-pager -q -o json'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { MESSAGE?: string; __REALTIME_TIMESTAMP: string })
      .map((e) => ({
        ms: Number(e.__REALTIME_TIMESTAMP) / 1000,
        msg: /\] "((?:[^"\\]|\\.)*)"/.exec(e.MESSAGE ?? '')?.[1],
        pod: /\bpod="([^"]+)"/.exec(e.MESSAGE ?? '')?.[1],
      }));
    const at = (msg: string, pod: string) => {
      const r = records.find((x) => x.msg === msg && x.pod === pod);
      expect(r, `${msg} ${pod}`).toBeDefined();
      return r!.ms;
    };
    const asked = (pod: string) => at('Shutdown manager killing pod with gracePeriod', `${pod}`);
    const done = (pod: string) => at('Shutdown manager finished killing pod', `${pod}`);
    const ns = (c: string) => `kube-system/${c}-${KUBEADM_NODE.name}`;
    const signalAt = records.find((r) => r.msg === 'Shutdown manager detected new shutdown event')?.ms ?? 0;
    log(
      `power-off timeline (ms after logind's signal):\n${records
        .filter((r) => /^Shutdown manager/.test(r.msg ?? ''))
        .map((r) => `  ${(r.ms - signalAt).toFixed(0).padStart(6)} ${r.msg}${r.pod ? ` ${r.pod}` : ''}`)
        .join('\n')}`,
    );
    // The ordinary group (the operator's pod) first; then controller-manager and scheduler, the API
    // server once they exited, etcd once the API server exited.
    expect(done(`default/guaranteed-${KUBEADM_NODE.name}`)).toBeLessThanOrEqual(asked(ns('kube-controller-manager')));
    expect(asked(ns('kube-apiserver'))).toBeGreaterThanOrEqual(
      Math.max(done(ns('kube-controller-manager')), done(ns('kube-scheduler'))),
    );
    expect(asked(ns('etcd'))).toBeGreaterThanOrEqual(done(ns('kube-apiserver')));
    expect(records.some((r) => r.msg === 'Shutdown manager pod killing time out')).toBe(false);
    // logind goes on (the delay lock is gone) as soon as the last pod has stopped.
    const poweringDown = (await g.sh('journalctl -b -1 -u systemd-logind --no-pager -q -o json'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { MESSAGE?: string; __REALTIME_TIMESTAMP: string })
      .find((e) => e.MESSAGE === 'System is powering down.');
    expect(poweringDown).toBeDefined();
    const lockGoneMs = Number(poweringDown!.__REALTIME_TIMESTAMP) / 1000 - done(ns('etcd'));
    log(`power-off: the delay lock went ${lockGoneMs.toFixed(0)} ms after etcd's pod stopped`);
    expect(lockGoneMs).toBeLessThan(3_000);
    // Nothing a power-off does is an error.
    expect((await g.sh('journalctl -b -1 -u kubelet --no-pager -q -p err')).trim()).toBe('');
    // etcd exited by itself on SIGTERM (exit status 0, not 137): containerd's exit event of its container.
    const etcdId = /containerID="([0-9a-f]+)"/.exec(
      await g.sh(
        `journalctl -b -1 -u kubelet --no-pager -q | grep '"Killing container" pod="${ns('etcd')}"' | tail -1`,
      ),
    )?.[1];
    expect(etcdId).toBeDefined();
    const exitEvent = await g.sh(
      `journalctl -b -1 -u containerd --no-pager -q | grep -F 'received container exit event' | grep -F '${etcdId}' | tail -1`,
    );
    expect(exitEvent).toContain('exited_at');
    // protobuf text leaves a zero out: no exit_status is 0.
    expect(/exit_status:(\d+)/.exec(exitEvent)?.[1] ?? '0').toBe('0');

    // etcd's data survived; one container per pod, none twice.
    const etcdPod = pods.find((p) => p.metadata?.name === `etcd-${KUBEADM_NODE.name}`)!;
    expect(etcdPod.metadata?.uid).toBe(before.find((p) => p.metadata?.name === etcdPod.metadata?.name)?.metadata?.uid);
    const got = await etcd(
      "r = call('/v3/kv/range', {'key': b64('bootlet/test-node')}); print(base64.b64decode(r['kvs'][0]['value']).decode())",
    );
    expect(got.trim()).toBe('before-poweroff');
    const tasks = await runningTasks();
    const perPod = new Map<string, number>();
    for (const line of (await g.sh('ctr -n k8s.io containers ls -q')).trim().split('\n')) {
      if (!tasks.has(line)) continue;
      const labels = JSON.parse(
        await g.sh(
          `ctr -n k8s.io containers info ${line} | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["Labels"]))'`,
        ),
      ) as Record<string, string>;
      const key = `${labels['io.kubernetes.pod.name']}/${labels['io.kubernetes.container.name'] ?? 'sandbox'}`;
      perPod.set(key, (perPod.get(key) ?? 0) + 1);
    }
    expect(
      [...perPod.values()].every((n) => n === 1),
      JSON.stringify([...perPod]),
    ).toBe(true);
  }, 1_800_000);
});

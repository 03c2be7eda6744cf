// `npm run up`: the quickest way to watch bootlet work on this machine. Installs the missing
// Debian packages, builds and imports the local images, starts a private containerd under
// .tmp/up (or uses the system one with --system), and runs build/bootlet in the foreground on
// manifests-example/. Ctrl-C stops bootlet; the pods keep running in containerd, as they do when
// a kubelet restarts. `npm run up -- --down` stops bootlet, the pods and the private containerd.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startContainerd, stopContainerdAt, RECORD_FILE, K8S_NAMESPACE } from './containerd.js';
import { isAlive, run, sleep, tryRun } from './exec.js';
import { buildTestImages, importTestImages, TEST_IMAGES } from './images.js';
import { REPO_ROOT, TMP_BASE } from './paths.js';
import { upBootletArgs, upKubeletConfig } from './up-config.js';

const UP_DIR = path.join(TMP_BASE, 'up');
const CONTAINERD_DIR = path.join(UP_DIR, 'containerd');
const BOOTLET_PID = path.join(UP_DIR, 'bootlet.pid');
const SYSTEM_SOCKET = '/run/containerd/containerd.sock';
// BOOTLET_BIN runs another build of bootlet (a debug build, an installed one) on the same setup.
const BOOTLET = process.env.BOOTLET_BIN
  ? path.resolve(process.env.BOOTLET_BIN)
  : path.join(REPO_ROOT, 'build', 'bootlet');
const MANIFESTS = path.join(REPO_ROOT, 'manifests-example');

const USAGE = `usage: npm run up [-- --system | --down | --help]
  (no flag)  start a private containerd under .tmp/up and run bootlet on manifests-example/
  --system   use the system containerd at ${SYSTEM_SOCKET} instead
  --down     stop bootlet, its pods and the private containerd; remove .tmp/up`;

function step(msg: string): void {
  console.log(`\n==> ${msg}`);
}

function parseArgs(argv: string[]): { system: boolean; down: boolean } {
  const out = { system: false, down: false };
  for (const a of argv) {
    if (a === '--system') out.system = true;
    else if (a === '--down') out.down = true;
    else if (a === '--help' || a === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else {
      console.error(`unknown flag ${a}\n${USAGE}`);
      process.exit(2);
    }
  }
  return out;
}

function installDebianPackages(): void {
  const r = spawnSync('bash', [path.join(REPO_ROOT, 'dev', 'install-deps.sh')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error('installing the Debian packages failed (see above)');
}

async function stopRunningBootlet(): Promise<void> {
  let pid = 0;
  try {
    pid = Number(fs.readFileSync(BOOTLET_PID, 'utf8').trim());
  } catch {
    return;
  }
  if (pid > 0 && isAlive(pid)) {
    console.log(`stopping bootlet (pid ${pid})`);
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (isAlive(pid) && Date.now() < deadline) await sleep(100);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  fs.rmSync(BOOTLET_PID, { force: true });
}

async function down(): Promise<void> {
  step('stopping bootlet');
  await stopRunningBootlet();
  step('stopping the private containerd and its pods');
  if (await stopContainerdAt(CONTAINERD_DIR)) console.log(`stopped the containerd under ${CONTAINERD_DIR}`);
  else console.log('no private containerd was running');
  fs.rmSync(UP_DIR, { recursive: true, force: true });
  console.log(`removed ${UP_DIR} (etcd's data in /var/lib/bootlet-example is kept)`);
}

/** Makes our pause image answer to whatever sandbox image the system containerd is set to use. */
async function tagSandboxImageForSystem(ctr: (args: string[]) => Promise<string>): Promise<void> {
  const dump = (await tryRun('containerd', ['config', 'dump'], { timeoutMs: 30_000 })) ?? '';
  const configured = /^\s*sandbox_image\s*=\s*"([^"]+)"/m.exec(dump)?.[1];
  if (configured && configured !== TEST_IMAGES.pause) {
    await ctr(['images', 'tag', '--force', TEST_IMAGES.pause, configured]);
    console.log(`tagged ${TEST_IMAGES.pause} as ${configured}, the system containerd's sandbox image`);
  }
}

async function containerdEndpoint(system: boolean): Promise<string> {
  if (system) {
    if (!fs.existsSync(SYSTEM_SOCKET))
      throw new Error(`--system: ${SYSTEM_SOCKET} does not exist; is containerd running?`);
    const ctr = (args: string[]) =>
      run('ctr', ['--address', SYSTEM_SOCKET, '-n', K8S_NAMESPACE, ...args], { timeoutMs: 300_000 });
    step(`importing the images into the system containerd (${SYSTEM_SOCKET})`);
    const images = await buildTestImages();
    for (const tarball of Object.values(images)) await ctr(['images', 'import', tarball]);
    await tagSandboxImageForSystem(ctr);
    return `unix://${SYSTEM_SOCKET}`;
  }
  step('building the images');
  const t0 = Date.now();
  const images = await buildTestImages();
  console.log(`${Object.values(TEST_IMAGES).join(', ')} (${Date.now() - t0} ms)`);

  if (fs.existsSync(path.join(CONTAINERD_DIR, RECORD_FILE))) {
    // A containerd from an earlier `npm run up` keeps the pods; start afresh only if it is gone.
    const record = JSON.parse(fs.readFileSync(path.join(CONTAINERD_DIR, RECORD_FILE), 'utf8')) as {
      pid: number;
      socket: string;
    };
    if (isAlive(record.pid) && (await tryRun('ctr', ['--address', record.socket, 'version'], { timeoutMs: 10_000 }))) {
      step(`reusing the private containerd (pid ${record.pid}) under ${CONTAINERD_DIR}`);
      const ctr = (args: string[]) =>
        run('ctr', ['--address', record.socket, '-n', K8S_NAMESPACE, ...args], { timeoutMs: 300_000 });
      const snapshotter = fs
        .readFileSync(path.join(CONTAINERD_DIR, 'config.toml'), 'utf8')
        .includes('snapshotter = "native"')
        ? 'native'
        : 'overlayfs';
      for (const tarball of Object.values(images))
        await ctr(['images', 'import', '--snapshotter', snapshotter, tarball]);
      return `unix://${record.socket}`;
    }
    await stopContainerdAt(CONTAINERD_DIR);
  }
  step(`starting a private containerd under ${CONTAINERD_DIR}`);
  const c = await startContainerd({ dir: CONTAINERD_DIR, name: 'up', persistent: true });
  console.log(
    `containerd pid ${c.pid}, endpoint ${c.endpoint}, snapshotter ${c.snapshotter}, log ${path.join(c.dir, 'containerd.log')}`,
  );
  step('importing the images');
  await importTestImages(c, images);
  return c.endpoint;
}

function writeKubeletConfig(): string {
  const file = path.join(UP_DIR, 'kubelet-config.yaml');
  const logs = path.join(UP_DIR, 'pods-logs');
  fs.mkdirSync(logs, { recursive: true });
  fs.writeFileSync(file, upKubeletConfig(logs));
  return file;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  fs.mkdirSync(UP_DIR, { recursive: true });
  if (args.down) return down();

  step('Debian packages');
  installDebianPackages();

  await stopRunningBootlet();
  const endpoint = await containerdEndpoint(args.system);

  if (!fs.existsSync(BOOTLET)) {
    step('building bootlet (npm run build)');
    const r = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('npm run build failed (see above)');
  }

  const config = writeKubeletConfig();
  const bootletArgs = upBootletArgs({
    config,
    manifests: MANIFESTS,
    endpoint,
    rootDir: path.join(UP_DIR, 'root'),
    hostname: os.hostname().toLowerCase(),
  });
  step(`running ${path.relative(REPO_ROOT, BOOTLET)} ${bootletArgs.join(' ')}`);
  console.log('Ctrl-C stops bootlet (the pods keep running); `npm run up -- --down` tears everything down.\n');

  // Its own process group, so a Ctrl-C reaches bootlet once, from us, not twice (terminal + us).
  const child = spawn(BOOTLET, bootletArgs, { cwd: REPO_ROOT, stdio: 'inherit', detached: true });
  if (child.pid) fs.writeFileSync(BOOTLET_PID, String(child.pid));
  const forward = (sig: NodeJS.Signals) => () => {
    if (child.exitCode === null) child.kill(sig);
  };
  process.on('SIGINT', forward('SIGINT'));
  process.on('SIGTERM', forward('SIGTERM'));
  process.on('SIGHUP', forward('SIGTERM'));
  const code = await new Promise<number>((resolve) => {
    child.on('error', (e) => {
      console.error(`could not start ${BOOTLET}: ${e.message}`);
      resolve(1);
    });
    child.on('exit', (c, sig) => resolve(c ?? (sig === 'SIGINT' || sig === 'SIGTERM' ? 0 : 1)));
  });
  fs.rmSync(BOOTLET_PID, { force: true });
  console.log(
    `\nbootlet exited (${code}). The pods and containerd keep running; \`npm run up -- --down\` removes them.`,
  );
  process.exit(code);
}

main().catch((e: unknown) => {
  console.error(`npm run up: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});

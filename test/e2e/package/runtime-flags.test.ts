// The executable runs with the V8 flags it carries (SEA `execArgv`, build/build.mjs) and ignores
// NODE_OPTIONS (`execArgvExtension: "none"`): the agent runs as root, and a `--require` in its
// environment would run that file inside it. Two observables, neither of which reads the build's
// own config: the flag list Node reports (`--version=raw` prints process.execArgv), and an effect
// of one of the flags in a running process: `--v8-pool-size=1` leaves one V8 worker thread, where a
// Node without it starts four. Needs build/bootlet (`npm run build`); no containerd.
import { execFile, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { containerLogDirectory, containerLogFileName } from '../../../src/node/pod-logs/layout.js';
import { BOOTLET_EXE } from '../../support/agent.js';
import { waitFor } from '../../support/wait.js';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '../../..');
/** The Node the executable carries, run bare: the control that shows each observable can tell. */
const CARRIED_NODE = path.join(ROOT, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');
/** The flags README "What an idle agent costs" gives the reasons for. */
const CARRIED_FLAGS = ['--max-opt=1', '--max-semi-space-size=1', '--optimize-for-size', '--v8-pool-size=1'];
/** A Node that read NODE_OPTIONS would stop on the missing preload, or (were that gone) run four V8 workers. */
const HOSTILE_NODE_OPTIONS = '--require=/nonexistent/bootlet-preload.cjs --v8-pool-size=4';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bootlet-flags-'));
const children: { kill(): boolean }[] = [];

afterAll(() => {
  for (const c of children) c.kill();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The threads V8's platform runs its background work on (Node names them "V8Worker"). */
function v8Workers(pid: number): number {
  const tasks = fs.readdirSync(`/proc/${pid}/task`);
  return tasks.filter((t) => fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim() === 'V8Worker').length;
}

/** Starts a command that stays up, and returns its PID once it has printed `ready`. */
async function startAndWait(cmd: string, args: string[], ready: string, nodeOptions: string): Promise<number> {
  const child = spawn(cmd, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: nodeOptions },
  });
  children.push(child);
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
  await waitFor(() => out.includes(ready) || child.exitCode !== null, {
    timeoutMs: 30_000,
    what: `${cmd} to print ${ready}`,
  });
  if (child.exitCode !== null) throw new Error(`${cmd} exited ${child.exitCode}: ${out}`);
  return child.pid!;
}

describe('the executable runs with its own V8 flags', () => {
  it('reports the flags it carries, with NODE_OPTIONS in its environment ignored', async () => {
    const env = { ...process.env, NODE_OPTIONS: HOSTILE_NODE_OPTIONS };
    // The control: the same Node, reading NODE_OPTIONS, fails on the preload.
    await expect(run(CARRIED_NODE, ['-e', '0'], { env })).rejects.toMatchObject({
      stderr: expect.stringContaining('/nonexistent/bootlet-preload.cjs'),
    });
    const { stdout, stderr } = await run(BOOTLET_EXE, ['--version=raw'], { env });
    expect(stderr).toBe('');
    expect((JSON.parse(stdout) as { nodeExecArgv: string[] }).nodeExecArgv).toEqual(CARRIED_FLAGS);
  });

  it('has them in effect in a command that keeps running: one V8 worker thread', async () => {
    // `bootlet logs -f` on a log the test writes: a process of the executable that stays up
    // without a container runtime.
    const pod = { metadata: { namespace: 'default', name: 'web', uid: '0a1b2c3d-0000-4000-8000-000000000001' } };
    const logs = path.join(dir, 'pods');
    const containerDir = containerLogDirectory(logs, pod, 'app');
    fs.mkdirSync(containerDir, { recursive: true });
    fs.writeFileSync(
      path.join(containerDir, containerLogFileName(0)),
      '2026-01-01T00:00:00.000000000Z stdout F flags-ready\n',
    );
    const agentPid = await startAndWait(
      BOOTLET_EXE,
      ['logs', 'web', '-f', `--pod-logs-dir=${logs}`, `--root-dir=${path.join(dir, 'no-agent')}`],
      'flags-ready',
      HOSTILE_NODE_OPTIONS,
    );
    expect(v8Workers(agentPid)).toBe(1);
    // The control: the carried Node without the executable's flags (and without NODE_OPTIONS, whose
    // preload would stop it) starts more than one.
    const bare = await startAndWait(
      CARRIED_NODE,
      ['-e', "process.stdout.write('bare-ready'); setTimeout(() => {}, 60_000)"],
      'bare-ready',
      '',
    );
    expect(v8Workers(bare)).toBeGreaterThan(1);
  });
});

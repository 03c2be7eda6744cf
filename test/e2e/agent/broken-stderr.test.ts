// The agent whose stderr goes away (the reader of its pipe exits, a journal socket closes) keeps
// running its pods. Found by the soak: with no error listener on stderr, the EPIPE became an
// uncaught exception whose own log line failed again, a loop that held a core for hours.
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ContainerState } from '../../../src/cri/cri-types.js';
import { busyboxPod, SLEEP_LOOP } from '../../support/busybox-pod.js';
import { waitFor } from '../../support/wait.js';
import { useAgentHarness } from './harness.js';

const NODE = 'node-stderr';
const h = useAgentHarness('stderr', NODE);
const run = promisify(execFile);

async function metric(name: string): Promise<number | undefined> {
  const { stdout } = await run('curl', [
    '-sS',
    '--max-time',
    '5',
    '--unix-socket',
    path.join(h.rootDir, 'bootlet.sock'),
    'http://localhost/metrics',
  ]);
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(stdout);
  return m ? Number(m[1]) : undefined;
}

const running = async (name: string) =>
  (await h.pods(name))[0]?.containers.some((c) => c.name === 'main' && c.state === ContainerState.CONTAINER_RUNNING) ===
  true;

describe('an agent whose stderr is closed', () => {
  it('drops and counts its log lines, raises no error about them, and goes on running pods', async () => {
    const agent = h.launch();
    h.write('before.yaml', busyboxPod('before', SLEEP_LOOP));
    await waitFor(() => running('before'), { timeoutMs: 90_000, what: 'the first pod to run' });

    // The reader goes away: every write the agent makes from now on fails with EPIPE.
    agent.proc.stderr?.destroy();
    agent.proc.stdout?.destroy();
    h.write('broken.yaml', 'apiVersion: v1\nkind: Pod\nmetadata: {name: broken}\nspec: {containers: [{name: c}]}\n');
    h.write('after.yaml', busyboxPod('after', SLEEP_LOOP));

    await waitFor(async () => ((await metric('bootlet_log_lines_dropped_total')) ?? 0) > 0, {
      timeoutMs: 30_000,
      what: 'dropped log lines to be counted',
    });
    await waitFor(() => running('after'), { timeoutMs: 90_000, what: 'a pod written after stderr closed to run' });
    expect(await metric('bootlet_unexpected_errors_total')).toBe(0);
    expect(agent.proc.exitCode).toBeNull();
    expect(await running('before')).toBe(true);
  });
});

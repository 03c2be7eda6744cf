// The status manager feeding the agent's socket, and `bootlet pods` reading it: the three wired
// as run.ts wires them, with a fake runtime and pod workers.
import { afterEach, describe, expect, it } from 'vitest';
import { runPodsCommand } from '../../../src/cli/pods-command.js';
import { createLogger } from '../../../src/log/logger.js';
import { startEndpoints, type RunningEndpoints } from '../../../src/server/endpoints.js';
import { StatusManager, type PodWorkerView } from '../../../src/status/status-manager.js';
import { useTmpDir } from '../../support/tmp.js';
import { exited, ns, probes, runtimePod, sandbox, staticPod, T0, UID } from '../status/fixtures.js';

const tmp = useTmpDir('wiring');
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });
let server: RunningEndpoints | undefined;
afterEach(async () => server?.close());

describe('status manager → pods socket → bootlet pods', () => {
  it('shows a crash-looping pod as kubectl would', async () => {
    const workers: PodWorkerView[] = [
      {
        uid: UID,
        key: 'default/web-node1',
        state: 'Syncing',
        pod: staticPod(),
        lastSync: {
          at: new Date(T0),
          waiting: new Map([['app', { reason: 'CrashLoopBackOff', message: 'back-off 40s' }]]),
        },
      },
    ];
    const status = new StatusManager({
      runtimePod: () =>
        runtimePod(
          [sandbox()],
          [
            exited('c3', 'app', 1, { restartCount: 3, createdAt: ns(T0 + 50_000), finishedAt: ns(T0 + 290_000) }),
            exited('c2', 'app', 1, { restartCount: 2 }),
          ],
        ),
      pods: () => workers,
      probes: probes(),
      nodeIP: '10.0.0.11',
      runtimeName: 'containerd',
      logger,
      readTerminationMessage: async () => '',
    });
    status.updateAll();
    await status.idle();
    server = await startEndpoints({
      healthzBindAddress: '127.0.0.1',
      healthzPort: 0,
      address: '127.0.0.1',
      readOnlyPort: 0,
      rootDir: tmp,
      syncFrequencyMs: 60_000,
      source: { statuses: () => status.all(), sinceLastRelistMs: () => 0 },
      logger,
    });
    let out = '';
    const code = await runPodsCommand(
      ['--root-dir', tmp],
      (s) => (out += s),
      () => {},
      () => T0 + 300_000,
    );
    expect(code).toBe(0);
    expect(out.split('\n')[1]).toBe('default     web-node1   0/1     CrashLoopBackOff   3 (10s ago)   5m');
  });
});

// Child process of the PLEG benchmark: runs one PLEG configuration against a runtime and prints the
// CPU it used over an idle window as one JSON line. A process of its own, so that nothing of the
// benchmark (pod starts, its own gRPC channel, garbage from earlier phases) is counted.
import { nullLogger } from '../src/log/logger.js';
import { PodCache } from '../src/pleg/pod-cache.js';
import { RuntimeReader } from '../src/pleg/runtime-reader.js';
import { createPleg } from '../src/pleg/pleg.js';
import { connectRuntime } from '../src/cri/cri-client.js';

export type IdleMode = 'none' | 'relist-1s' | 'events-1s' | 'events-default';

export interface IdleResult {
  mode: IdleMode;
  mechanism: string;
  cpuMs: number;
  wallMs: number;
  events: number;
}

async function main(): Promise<void> {
  const [endpoint, mode, seconds] = process.argv.slice(2) as [string, IdleMode, string];
  const { runtime, version } = await connectRuntime(endpoint);
  let events = 0;
  const pleg =
    mode === 'none'
      ? undefined
      : createPleg({
          runtime,
          reader: new RuntimeReader(runtime, new PodCache()),
          endpoint,
          // relist-1s: the kubelet's generic PLEG, chosen as bootlet would for a non-containerd runtime.
          runtimeName: mode === 'relist-1s' ? 'relist-only' : version.runtimeName,
          runtimeVersion: version.runtimeVersion,
          logger: nullLogger,
          onEvent: () => events++,
          ...(mode === 'events-1s' ? { eventedRelistPeriodMs: 1000 } : {}),
        });
  pleg?.start();
  // Settle: the mechanism is chosen within a second; the first relist reports every pod once.
  await new Promise((r) => setTimeout(r, 5000));
  // V8 collects start-up garbage in the background once a process turns idle (its memory
  // reducer); collected here, it is not counted against whatever runs in the window.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  events = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
  const c = process.cpuUsage(c0);
  const result: IdleResult = {
    mode,
    mechanism: pleg?.mechanism() ?? 'none',
    cpuMs: (c.user + c.system) / 1000,
    wallMs: performance.now() - t0,
    events,
  };
  pleg?.stop();
  runtime.close();
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

// The PLEG against a real containerd (BOOTLET_TEST_CONTAINERD picks which): each version gets its
// source of events, 1.6 containerd's task events (no CRI events), 1.7 the same (its CRI events are
// shared among subscribers), 2.x CRI GetContainerEvents; a second PLEG beside it (relisting on 1.6,
// another CRI subscriber on 1.7 and 2.x) sees the same. A container killed with SIGKILL is reported
// as ContainerDied for its pod and no other, by both; an OOM kill is flagged on the ContainerDied
// where containerd's /tasks/oom is heard, and is in the CRI's reason everywhere.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { defaultContainerdVersion, type ContainerdVersion } from '../../../dev/containerd-versions.js';
import { importTestImages } from '../../../dev/images.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { PodCache } from '../../../src/pleg/pod-cache.js';
import { RuntimeReader } from '../../../src/pleg/runtime-reader.js';
import { createPleg, type EventedPleg } from '../../../src/pleg/pleg.js';
import type { PlegMechanism, PodLifecycleEvent } from '../../../src/pleg/types.js';
import { connectRuntime, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';
import { removePlegPod, startPlegPod, taskPid, type PlegPod, type PlegPodContext } from './pleg-pod.js';

// Registered first so that it runs last, after containerd is stopped.
const tmp = useTmpDir('pleg-e2e');
let cd: PrivateContainerd | undefined;
let cri: RuntimeConnection | undefined;
let ctx: PlegPodContext;
const pods: PlegPod[] = [];
const plegs: EventedPleg[] = [];

interface Watched {
  pleg: EventedPleg;
  events: PodLifecycleEvent[];
  lines: string[];
}

function watch(runtimeName: string): Watched {
  const events: PodLifecycleEvent[] = [];
  const { logger, lines } = memoryLogger(2);
  const pleg = createPleg({
    runtime: cri!.runtime,
    reader: new RuntimeReader(cri!.runtime, new PodCache()),
    endpoint: cd!.endpoint,
    runtimeName,
    runtimeVersion: cri!.version.runtimeVersion,
    logger,
    onEvent: (e) => events.push(e),
  });
  plegs.push(pleg);
  return { pleg, events, lines };
}

beforeAll(async () => {
  cd = await startContainerd({ name: 'pleg' });
  await importTestImages(cd);
  cri = await connectRuntime(cd.endpoint);
  ctx = { runtime: cri.runtime, images: cri.images, podLogsDir: path.join(tmp, 'logs') };
});

afterAll(async () => {
  for (const p of plegs) p.stop();
  for (const p of pods) await removePlegPod(ctx, p);
  cri?.runtime.close();
  await cd?.stop();
});

const version: ContainerdVersion = defaultContainerdVersion();

/** What each version's PLEG uses, and what a second one that does not call the runtime containerd uses. */
const EXPECTED: Record<ContainerdVersion, { mechanism: PlegMechanism; reason: RegExp; second: PlegMechanism }> = {
  '1.6': { mechanism: 'containerd-events', reason: /does not broadcast CRI GetContainerEvents/, second: 'relist' },
  '1.7': { mechanism: 'containerd-events', reason: /does not broadcast CRI GetContainerEvents/, second: 'cri-events' },
  '2.1': { mechanism: 'cri-events', reason: /the runtime serves CRI GetContainerEvents/, second: 'cri-events' },
};

describe(`PLEG on containerd ${version}`, () => {
  let evented: Watched;
  let second: Watched;
  const expected = EXPECTED[version];

  it.runIf(version === '1.7')(
    'containerd 1.7 gives each CRI event to one of its subscribers only, which is why its task events are used',
    async () => {
      const seen: string[][] = [[], []];
      const streams = seen.map((into) =>
        cri!.runtime.getContainerEvents(
          (e) => into.push(`${e.containerEventType}/${e.containerId}`),
          () => undefined,
        ),
      );
      try {
        // Before any PLEG subscribes: these two are the only subscribers. Opened once the runtime has taken both: a stream is up before its first event.
        await new Promise((r) => setTimeout(r, 500));
        const shared = await startPlegPod(ctx, 'shared');
        pods.push(shared);
        await waitFor(() => seen[0]!.length + seen[1]!.length >= 3, {
          timeoutMs: 30_000,
          what: "the pod's sandbox and container events on either stream",
        });
        // Broadcast, both streams would hold every event; shared, no event is on both.
        expect(seen[0]!.filter((e) => seen[1]!.includes(e))).toEqual([]);
      } finally {
        for (const s of streams) s.cancel();
      }
    },
  );

  it(`chooses ${expected.mechanism}, and ${expected.second} for a runtime not called containerd`, async () => {
    evented = watch(cri!.version.runtimeName);
    second = watch('not-containerd');
    evented.pleg.start();
    second.pleg.start();
    await waitFor(() => evented.pleg.mechanism() === expected.mechanism, {
      timeoutMs: 30_000,
      what: `${expected.mechanism} to be chosen`,
    });
    const chosen = evented.lines.find((l) => l.includes('PLEG mechanism chosen'));
    expect(chosen).toMatch(expected.reason);
    await waitFor(() => second.lines.some((l) => l.includes('PLEG mechanism chosen')), {
      timeoutMs: 30_000,
      what: 'the second PLEG to choose',
    });
    await waitFor(() => second.pleg.mechanism() === expected.second, {
      timeoutMs: 30_000,
      what: `${expected.second} for the second PLEG`,
    });
  });

  it('reports the containers it sees start', async () => {
    pods.push(await startPlegPod(ctx, 'victim'), await startPlegPod(ctx, 'bystander'));
    for (const w of [evented, second]) {
      for (const p of pods) {
        await waitFor(
          () => w.events.some((e) => e.podUid === p.uid && e.type === 'ContainerStarted' && e.id === p.containerIds[0]),
          {
            timeoutMs: 30_000,
            what: `ContainerStarted for ${p.name}`,
          },
        );
      }
    }
  });

  it('reports a container killed with SIGKILL as ContainerDied for its pod only', async () => {
    const [victim, bystander] = pods as [PlegPod, PlegPod];
    const marks = [evented.events.length, second.events.length];
    process.kill(await taskPid(cd!, victim.containerIds[0]!), 'SIGKILL');
    for (const w of [evented, second]) {
      await waitFor(
        () =>
          w.events.some(
            (e) => e.podUid === victim.uid && e.type === 'ContainerDied' && e.id === victim.containerIds[0],
          ),
        {
          timeoutMs: 30_000,
          what: 'ContainerDied for the killed container',
        },
      );
    }
    // Let a further relist pass, so that a wrong event for the bystander would have shown.
    await evented.pleg.relist();
    await second.pleg.relist();
    for (const [i, w] of [evented, second].entries()) {
      const after = w.events.slice(marks[i]);
      expect(after.filter((e) => e.podUid === bystander.uid)).toEqual([]);
      expect(after.map((e) => [e.type, e.id])).toEqual([['ContainerDied', victim.containerIds[0]]]);
    }
    expect(evented.pleg.sinceLastRelistMs()).toBeLessThan(60_000);
  });

  it('flags a container killed by the OOM killer', async () => {
    // tail keeps the newline-free /dev/zero in memory until the 16Mi limit is hit.
    const hog = await startPlegPod(ctx, 'hog', {
      memoryLimit: '16Mi',
      command: ['sh', '-c', 'sleep 1; tail /dev/zero'],
    });
    pods.push(hog);
    const died = await waitFor(() => evented.events.find((e) => e.podUid === hog.uid && e.type === 'ContainerDied'), {
      timeoutMs: 60_000,
      what: 'ContainerDied for the OOM-killed container',
    });
    expect(died.id).toBe(hog.containerIds[0]);
    // The flag comes from /tasks/oom, which only containerd's own events carry; the CRI says it itself.
    if (expected.mechanism === 'containerd-events') expect(died.oomKilled).toBe(true);
    expect((await cri!.runtime.containerStatus(hog.containerIds[0]!)).reason).toBe('OOMKilled');
  });
});

// The PLEG against a real containerd 1.6: it detects that CRI GetContainerEvents is not served and
// subscribes to containerd's task events; a container killed with SIGKILL is reported as
// ContainerDied for its pod and no other, by the evented PLEG and by the relist-only fallback alike;
// an OOM kill is flagged on the ContainerDied.
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { importTestImages } from '../../../dev/images.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { PodCache } from '../../../src/pleg/pod-cache.js';
import { RuntimeReader } from '../../../src/pleg/runtime-reader.js';
import { createPleg, type EventedPleg } from '../../../src/pleg/pleg.js';
import type { PodLifecycleEvent } from '../../../src/pleg/types.js';
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

describe('PLEG on containerd 1.6', () => {
  let evented: Watched;
  let relisting: Watched;

  it('falls back from CRI events to containerd task events, and to relisting for another runtime name', async () => {
    evented = watch(cri!.version.runtimeName);
    relisting = watch('not-containerd');
    evented.pleg.start();
    relisting.pleg.start();
    await waitFor(() => evented.pleg.mechanism() === 'containerd-events', {
      timeoutMs: 30_000,
      what: 'the containerd event stream to be chosen',
    });
    const chosen = evented.lines.find((l) => l.includes('PLEG mechanism chosen'));
    expect(chosen).toMatch(/CRI GetContainerEvents is not served/);
    await waitFor(() => relisting.lines.some((l) => l.includes('PLEG mechanism chosen')), {
      timeoutMs: 30_000,
      what: 'relisting to be chosen',
    });
    expect(relisting.pleg.mechanism()).toBe('relist');
  });

  it('reports the containers it sees start', async () => {
    pods.push(await startPlegPod(ctx, 'victim'), await startPlegPod(ctx, 'bystander'));
    for (const w of [evented, relisting]) {
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
    const marks = [evented.events.length, relisting.events.length];
    process.kill(await taskPid(cd!, victim.containerIds[0]!), 'SIGKILL');
    for (const w of [evented, relisting]) {
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
    await relisting.pleg.relist();
    for (const [i, w] of [evented, relisting].entries()) {
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
    expect(died).toMatchObject({ id: hog.containerIds[0], oomKilled: true });
  });
});

// The file source against real directories: events from the watcher, rescans, editors' save
// patterns. Every wait polls for a condition with a generous deadline.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFileSource, VANISHED_CONFIRM_MS, type FileSource } from '../../../src/config/file-source';
import type { ConfigSourceEvents, ManifestError, ManifestWarning, PodUpdate } from '../../../src/config/types';
import { createLogger, memoryLogger } from '../../../src/log/logger';
import { ownOutputReason } from '../../../src/config/own-output';
import { makeTmpDir, removeTmpDir } from '../../support/tmp';
import { waitFor } from '../../support/wait';
import { podYaml } from './helpers';

const base = makeTmpDir('file-source');
afterAll(() => removeTmpDir(base));
let dirs = 0;
const newDir = (): string => {
  const d = join(base, `d${++dirs}`);
  mkdirSync(d);
  return d;
};

interface Recorder extends ConfigSourceEvents {
  updates: Array<PodUpdate & { at: number }>;
  errors: ManifestError[];
  warnings: ManifestWarning[];
  isReady: boolean;
}
function recorder(): Recorder {
  const r: Recorder = {
    updates: [],
    errors: [],
    warnings: [],
    isReady: false,
    update: (u) => r.updates.push({ ...u, at: performance.now() }),
    error: (e) => r.errors.push(e),
    warning: (w) => r.warnings.push(w),
    ready: () => {
      r.isReady = true;
    },
  };
  return r;
}
const ops = (r: Recorder) => r.updates.map((u) => `${u.op} ${u.pod.key}`);
const images = (u: PodUpdate) => u.pod.pod.spec!.containers.map((c) => c.image).join(',');

const running: FileSource[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function start(path: string, extra: { settleMs?: number; now?: () => number } = {}) {
  const events = recorder();
  const { logger, lines } = memoryLogger(4);
  const read = extra.settleMs === undefined ? undefined : { settleMs: extra.settleMs, now: extra.now };
  const src = startFileSource({
    path,
    nodeName: 'node-a',
    fileCheckFrequencyMs: 60_000,
    logger,
    events,
    missingPathRetryMs: 100,
    read,
  });
  running.push(src);
  return { events, lines, src };
}
const WAIT = { timeoutMs: 15_000, intervalMs: 20 };
const ready = (r: Recorder) => waitFor(() => r.isReady, { ...WAIT, what: 'ready()' });
const updates = (r: Recorder, n: number, what: string) =>
  waitFor(() => r.updates.length >= n && r.updates, { ...WAIT, what: `${n} updates: ${what}` });

describe('startFileSource', () => {
  it('follows add, edit, broken edit, fix and delete of a manifest', async () => {
    const dir = newDir();
    const { events, lines } = start(dir);
    await ready(events);
    expect(events.updates).toEqual([]);
    const f = join(dir, 'web.yaml');

    writeFileSync(f, podYaml('web', 'busybox:1'));
    await updates(events, 1, 'ADD');
    expect(ops(events)).toEqual(['ADD default/web-node-a']);
    const firstUid = events.updates[0]!.pod.uid;
    expect(lines.filter((l) => l.includes('Static pod manifest accepted'))).toHaveLength(1);
    expect(lines.find((l) => l.includes('Static pod manifest accepted'))).toContain(firstUid);

    writeFileSync(f, podYaml('web', 'busybox:2'));
    await updates(events, 2, 'UPDATE');
    const up = events.updates[1]!;
    expect(up.op === 'UPDATE' && [up.previous.uid, images(up)]).toEqual([firstUid, 'busybox:2']);

    writeFileSync(f, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n   oops: 1\n');
    await waitFor(() => events.errors.length >= 1, { ...WAIT, what: 'error for the broken edit' });
    expect(events.errors[0]).toMatchObject({ file: f, line: 4 });
    expect(lines.some((l) => l.includes('Static pod manifest refused') && l.includes('line 4'))).toBe(true);
    // A broken edit is not a deletion: a rescan changes nothing and does not repeat the error.
    const src = running[0]!;
    await src.rescan();
    expect(events.updates).toHaveLength(2);
    expect(events.errors).toHaveLength(1);

    writeFileSync(f, podYaml('web', 'busybox:3'));
    await updates(events, 3, 'UPDATE after the fix');
    expect(images(events.updates[2]!)).toBe('busybox:3');

    rmSync(f);
    await updates(events, 4, 'REMOVE');
    expect(ops(events)[3]).toBe('REMOVE default/web-node-a');
  });

  it('keeps the pod while an editor renames the manifest to its backup and writes it again (emacs, vim writebackup)', async () => {
    const dir = newDir();
    const f = join(dir, 'web.yaml');
    writeFileSync(f, podYaml('web'));
    const { events, lines, src } = start(dir);
    await ready(events);
    expect(ops(events)).toEqual(['ADD default/web-node-a']);
    renameSync(f, `${f}~`);
    // The source has looked and found no file: until now that removed the pod at once.
    await waitFor(() => lines.some((l) => l.includes('Manifest file gone')), {
      ...WAIT,
      what: 'the look that finds the file gone',
    });
    writeFileSync(f, podYaml('web'));
    await src.rescan();
    expect(ops(events)).toEqual(['ADD default/web-node-a']);
    // Renamed back as it was (the same inode: nothing to read), and away again once the first
    // disappearance's window has passed: the second one waits out its own window too.
    renameSync(f, `${f}.old`);
    await waitFor(() => lines.filter((l) => l.includes('Manifest file gone')).length >= 2, {
      ...WAIT,
      what: 'the second look that finds the file gone',
    });
    renameSync(`${f}.old`, f);
    await src.rescan();
    await sleep(VANISHED_CONFIRM_MS + 50);
    renameSync(f, `${f}~`);
    await waitFor(() => lines.filter((l) => l.includes('Manifest file gone')).length >= 3, {
      ...WAIT,
      what: 'the third look that finds the file gone',
    });
    renameSync(`${f}~`, f);
    await src.rescan();
    expect(ops(events)).toEqual(['ADD default/web-node-a']);
    // A manifest that stays away is removed.
    rmSync(f);
    await updates(events, 2, 'REMOVE');
    expect(ops(events)).toEqual(['ADD default/web-node-a', 'REMOVE default/web-node-a']);
  });

  it('reports nothing on a rescan of unchanged files, and a touch changes nothing', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'web.yaml'), podYaml('web'));
    const { events, lines, src } = start(dir);
    await ready(events);
    expect(ops(events)).toEqual(['ADD default/web-node-a']);
    const before = lines.length;
    execFileSync('touch', [join(dir, 'web.yaml')]);
    await src.rescan();
    await src.rescan();
    expect(events.updates).toHaveLength(1);
    expect(lines.slice(before).filter((l) => !l.includes('"v":4'))).toEqual([]);
  });

  it('never starts a pod from a half-written file: rename-over', async () => {
    const dir = newDir();
    const { events } = start(dir);
    await ready(events);
    const f = join(dir, 'web.yaml');
    for (let i = 1; i <= 5; i++) {
      const tmp = join(dir, `.web.yaml.${i}`);
      writeFileSync(tmp, podYaml('web', `busybox:${i}`));
      renameSync(tmp, f);
      await waitFor(() => events.updates.some((u) => images(u) === `busybox:${i}`), { ...WAIT, what: `version ${i}` });
    }
    expect(events.errors).toEqual([]);
    expect(ops(events)).toEqual(['ADD default/web-node-a', ...Array(4).fill('UPDATE default/web-node-a')]);
  });

  it('never starts a pod from a half-written file: in-place write in two chunks with a pause', async () => {
    const dir = newDir();
    const f = join(dir, 'web.yaml');
    // While the writer pauses, the reader's clock stands still at the first chunk's write: however
    // long the pause takes in real time, it stays shorter than the settle time.
    let frozenAt: number | undefined;
    let looks = 0;
    const { events } = start(dir, { settleMs: 50, now: () => (looks++, frozenAt ?? Date.now()) });
    await ready(events);
    // The first chunk alone is a valid pod with one container: it must never be started.
    const whole = podYaml('web', 'busybox:1', '  - name: second\n    image: busybox:1\n');
    const cut = whole.indexOf('  - name: second');
    for (let round = 0; round < 3; round++) {
      const content = whole.replace(/busybox:1/g, `busybox:${round + 1}`);
      const chunkAt = content.indexOf('  - name: second');
      expect(chunkAt).toBe(cut);
      const fd = openSync(f, 'a+');
      ftruncateSync(fd, 0);
      writeSync(fd, content.slice(0, cut), 0);
      frozenAt = statSync(f).ctimeMs;
      const from = looks;
      // Three looks at the first chunk: a source that took it would have read it twice and be done.
      const halfTaken = () => events.updates.some((u) => u.pod.pod.spec!.containers.length !== 2);
      await waitFor(() => looks - from >= 3 || halfTaken(), {
        ...WAIT,
        what: `round ${round}: the source to look at the first chunk three times`,
      });
      expect(halfTaken()).toBe(false);
      writeSync(fd, content.slice(cut), cut);
      closeSync(fd);
      frozenAt = undefined;
      await waitFor(() => events.updates.some((u) => images(u) === `busybox:${round + 1},busybox:${round + 1}`), {
        ...WAIT,
        what: `round ${round}`,
      });
    }
    expect(events.updates.every((u) => u.pod.pod.spec!.containers.length === 2)).toBe(true);
    expect(events.errors).toEqual([]);
  });

  it('makes no pod from editor swap files, backups and package leftovers, and logs each skip once', async () => {
    const dir = newDir();
    const { events, lines, src } = start(dir);
    await ready(events);
    for (const name of [
      '.web.yaml.swp',
      'web.yaml~',
      'web.yaml.bak',
      '#web.yaml#',
      'web.yaml.dpkg-new',
      'web.yaml.rpmsave',
    ]) {
      writeFileSync(join(dir, name), podYaml('web'));
    }
    writeFileSync(join(dir, 'marker.yaml'), podYaml('marker'));
    await updates(events, 1, 'the marker pod');
    await src.rescan();
    await src.rescan();
    expect(ops(events)).toEqual(['ADD default/marker-node-a']);
    const skips = lines.filter((l) => l.includes('Skipping file in manifest directory'));
    expect(skips.filter((l) => l.includes('web.yaml.bak'))).toHaveLength(1);
    expect(skips.filter((l) => l.includes('.web.yaml.swp'))).toHaveLength(1);
  });

  it('skips sub-directories and fifos with one log line each, follows symlinks to files', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'inner.yaml'), podYaml('inner'));
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    const target = join(base, `target-${dirs}.yaml`);
    writeFileSync(target, podYaml('linked'));
    symlinkSync(target, join(dir, 'linked.yaml'));
    symlinkSync(join(dir, 'sub'), join(dir, 'dirlink'));
    const { events, lines, src } = start(dir);
    await ready(events);
    await src.rescan();
    expect(ops(events)).toEqual(['ADD default/linked-node-a']);
    expect(lines.filter((l) => l.includes('Not recursing into sub-directory'))).toHaveLength(2);
    expect(lines.filter((l) => l.includes('not a regular file'))).toHaveLength(1);
    // A change to the link's target is found by the periodic rescan.
    writeFileSync(target, podYaml('linked', 'busybox:9'));
    await src.rescan();
    expect(events.updates.map(images)).toEqual(['busybox:1.36', 'busybox:9']);
  });

  it("refuses a symlink to the agent's own log once, and each line the agent writes there is not read again", async () => {
    const dir = newDir();
    const log = join(base, `agent-${dirs}.log`);
    writeFileSync(log, '');
    const fd = openSync(log, 'a');
    const own = [{ dev: statSync(log).dev, ino: statSync(log).ino, what: 'standard error' }];
    // The agent's log is the file the manifest links to: every line it logs grows the manifest.
    const logger = createLogger({ format: 'json', verbosity: 4, sink: { write: (l) => writeSync(fd, l + '\n') } });
    symlinkSync(log, join(dir, 'self.yaml'));
    const events = recorder();
    const src = startFileSource({
      path: dir,
      nodeName: 'node-a',
      fileCheckFrequencyMs: 60_000,
      logger,
      events,
      read: { ownOutput: (st) => ownOutputReason(st, own) },
    });
    running.push(src);
    try {
      await ready(events);
      for (let i = 0; i < 5; i++) {
        writeSync(fd, `{"msg":"another line ${i}"}\n`);
        await src.rescan();
      }
      const refusals = readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.includes('Static pod manifest refused'));
      expect(refusals).toHaveLength(1);
      expect(refusals[0]).toContain(
        "the file is the agent's own standard error (its log): bootlet never reads its own output as a manifest",
      );
      expect(events.errors).toHaveLength(1);
      expect(events.updates).toEqual([]);
    } finally {
      closeSync(fd);
    }
  });

  it('logs a manifest whose content changes at every read a few times, then counts, and tells the count when it is fixed', async () => {
    const dir = newDir();
    const { events, lines, src } = start(dir);
    await ready(events);
    const file = join(dir, 'flappy.yaml');
    const save = (content: string): void => {
      writeFileSync(join(dir, '.flappy.yaml.tmp'), content);
      renameSync(join(dir, '.flappy.yaml.tmp'), file);
    };
    for (let i = 0; i < 20; i++) {
      save(`apiVersion: v1\nkind: Pod${i}\n`);
      await src.rescan();
    }
    await waitFor(() => events.errors.length >= 20, { ...WAIT, what: '20 refusals' });
    const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r.file === file);
    expect(logged().filter((r) => r.msg === 'Static pod manifest refused')).toHaveLength(5);
    save(podYaml('flappy'));
    await updates(events, 1, 'flappy accepted');
    const again = logged().find((r) => r.msg === 'Static pod manifest refused again');
    expect(again).toMatchObject({ times: 15, err: 'kind is "Pod19": expected "Pod"' });
    expect(
      logged()
        .map((r) => r.msg)
        .slice(-2),
    ).toEqual(['Static pod manifest refused again', 'Static pod manifest accepted']);
  });

  it('gives a key to the first file by name and hands it over when that file goes', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'b.yaml'), podYaml('web', 'busybox:b'));
    writeFileSync(join(dir, 'a.yaml'), podYaml('web', 'busybox:a'));
    const { events } = start(dir);
    await ready(events);
    expect(events.updates.map(images)).toEqual(['busybox:a']);
    expect(events.errors).toEqual([
      {
        file: join(dir, 'b.yaml'),
        podKey: 'default/web-node-a',
        message: expect.stringContaining(`already declared by ${join(dir, 'a.yaml')}`),
      },
    ]);
    rmSync(join(dir, 'a.yaml'));
    await updates(events, 2, 'takeover by b.yaml');
    expect(events.updates[1]!.op === 'UPDATE' && images(events.updates[1]!)).toBe('busybox:b');
  });

  it('waits for a missing directory and picks up its pods when it appears', async () => {
    const dir = join(newDir(), 'manifests');
    const { events, lines } = start(dir);
    await ready(events);
    expect(events.updates).toEqual([]);
    mkdirSync(dir);
    writeFileSync(join(dir, 'web.yaml'), podYaml('web'));
    await updates(events, 1, 'ADD once the directory exists');
    expect(lines.filter((l) => l.includes('does not exist'))).toHaveLength(1);
    // The directory going away takes its pods with it; coming back brings them back.
    rmSync(dir, { recursive: true });
    await updates(events, 2, 'REMOVE after the directory went');
    mkdirSync(dir);
    writeFileSync(join(dir, 'web.yaml'), podYaml('web'));
    await updates(events, 3, 'ADD after it came back');
    expect(ops(events)).toEqual(['ADD default/web-node-a', 'REMOVE default/web-node-a', 'ADD default/web-node-a']);
  });

  it('watches a single manifest file, including rename-over, and ignores its neighbours', async () => {
    const dir = newDir();
    const f = join(dir, 'etcd.yaml');
    writeFileSync(join(dir, 'other.yaml'), podYaml('other'));
    const { events, src } = start(f);
    await ready(events);
    expect(events.updates).toEqual([]);
    writeFileSync(f, podYaml('etcd', 'etcd:1'));
    await updates(events, 1, 'ADD of the single file');
    writeFileSync(join(dir, '.tmp'), podYaml('etcd', 'etcd:2'));
    renameSync(join(dir, '.tmp'), f);
    await updates(events, 2, 'UPDATE by rename-over');
    writeFileSync(join(dir, 'other2.yaml'), podYaml('other2'));
    await src.rescan();
    rmSync(f);
    await updates(events, 3, 'REMOVE');
    expect(ops(events)).toEqual([
      'ADD default/etcd-node-a',
      'UPDATE default/etcd-node-a',
      'REMOVE default/etcd-node-a',
    ]);
  });

  it('sees a manifest written the moment the first scan is done: the watch is in place before the listing', async () => {
    const dir = newDir();
    const f = join(dir, 'early.yaml');
    const events = recorder();
    const ready = events.ready;
    events.ready = () => {
      writeFileSync(f, podYaml('early'));
      ready();
    };
    // No rescan within the test: only the watcher can find the file.
    running.push(
      startFileSource({
        path: dir,
        nodeName: 'node-a',
        fileCheckFrequencyMs: 600_000,
        logger: memoryLogger(0).logger,
        events,
      }),
    );
    await updates(events, 1, 'ADD of the file written at ready()');
    expect(ops(events)).toEqual(['ADD default/early-node-a']);
  });

  it('reads a manifest renamed over an existing one without waiting for in-place writes to settle', async () => {
    const dir = newDir();
    const f = join(dir, 'web.yaml');
    writeFileSync(f, podYaml('web', 'busybox:1'));
    // A settle time far beyond the wait below: only a file taken as written in place would wait it out.
    const { events } = start(dir, { settleMs: 30_000 });
    await updates(events, 1, 'ADD');
    // Unlinking the replaced file shows as a change on its own watch; it must not count as a write.
    writeFileSync(join(dir, '.web.yaml.tmp'), podYaml('web', 'busybox:2'));
    renameSync(join(dir, '.web.yaml.tmp'), f);
    await updates(events, 2, 'UPDATE by rename-over');
    expect(images(events.updates[1]!)).toBe('busybox:2');
  });

  it('ends with the last of several quick saves, however close together', async () => {
    const dir = newDir();
    const f = join(dir, 'web.yaml');
    writeFileSync(f, podYaml('web', 'busybox:0'));
    const { events } = start(dir);
    await updates(events, 1, 'ADD');
    // Quick saves of one name, each an event of its own: none may be folded away (chokidar, used before, dropped a second "change" within 50 ms).
    for (const gapMs of [5, 30]) {
      for (let i = 1; i <= 5; i++) {
        writeFileSync(join(dir, '.web.yaml.tmp'), podYaml('web', `busybox:${gapMs}-${i}`));
        renameSync(join(dir, '.web.yaml.tmp'), f);
        await sleep(gapMs); // the pace of the saves is the input under test, not a wait for the source
      }
      await waitFor(() => events.updates.at(-1) && images(events.updates.at(-1)!) === `busybox:${gapMs}-5`, {
        ...WAIT,
        what: `the last save (${gapMs} ms apart)`,
      });
    }
    expect(events.errors).toEqual([]);
  });

  it('survives a ready() handler that throws, says so, and keeps following the directory', async () => {
    const dir = newDir();
    const events = recorder();
    events.ready = () => {
      events.isReady = true;
      throw new Error('handler broke');
    };
    const { logger, lines } = memoryLogger(0);
    running.push(startFileSource({ path: dir, nodeName: 'node-a', fileCheckFrequencyMs: 60_000, logger, events }));
    await ready(events);
    expect(lines.filter((l) => l.includes('ready handler failed') && l.includes('handler broke'))).toHaveLength(1);
    writeFileSync(join(dir, 'web.yaml'), podYaml('web'));
    await updates(events, 1, 'ADD after the failed handler');
  });

  it('reports unknown fields as warnings and still accepts the pod', async () => {
    const dir = newDir();
    writeFileSync(join(dir, 'web.yaml'), podYaml('web', 'busybox:1', '    imagePullPolcy: Never\n'));
    const { events } = start(dir);
    await ready(events);
    expect(ops(events)).toEqual(['ADD default/web-node-a']);
    expect(events.warnings).toEqual([
      { file: join(dir, 'web.yaml'), message: 'unknown field "spec.containers[0].imagePullPolcy"' },
    ]);
  });

  // Latency is measured for the report, not asserted; what is asserted is that each in-place write
  // gave exactly one update, of the whole file.
  it('measures write -> update latency', async () => {
    const dir = newDir();
    const f = join(dir, 'web.yaml');
    const { events } = start(dir);
    await ready(events);
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      writeFileSync(f, podYaml('web', `busybox:${i}`));
      const u = await waitFor(() => events.updates.find((x) => images(x) === `busybox:${i}`), {
        ...WAIT,
        intervalMs: 2,
        what: `write ${i}`,
      });
      latencies.push(u.at - t0);
    }
    latencies.sort((a, b) => a - b);
    const pct = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(0);
    console.log(
      `file-source write->update latency over 20 writes: p50 ${pct(50)} ms, p90 ${pct(90)} ms, max ${pct(100)} ms`,
    );
    expect(ops(events)).toEqual(['ADD default/web-node-a', ...Array(19).fill('UPDATE default/web-node-a')]);
    expect(events.updates.map(images)).toEqual(Array.from({ length: 20 }, (_, i) => `busybox:${i}`));
    expect(events.errors).toEqual([]);
  });

  it('names a manifest whose file name is not valid UTF-8 instead of skipping it in silence', async () => {
    const dir = newDir();
    writeFileSync(
      Buffer.concat([Buffer.from(`${dir}/web-`), Buffer.from([0xff, 0xfe]), Buffer.from('.yaml')]),
      podYaml('web'),
    );
    writeFileSync(join(dir, 'ok.yaml'), podYaml('ok'));
    const { events, lines } = start(dir);
    await ready(events);
    await updates(events, 1, 'ADD ok');
    expect(ops(events)).toEqual(['ADD default/ok-node-a']);
    const line = lines.find((l) => l.includes('not valid UTF-8'));
    expect(line).toContain('web-\\\\xff\\\\xfe.yaml');
  });
});

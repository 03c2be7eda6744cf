// READY, STATUS and the watchdog decisions, and the journal's priority prefixes.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Pod } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { createLogger, memoryLogger } from '../../../src/log/logger.js';
import { stderrIsJournal } from '../../../src/systemd/journal.js';
import { startupProgress, type PodView } from '../../../src/systemd/startup-progress.js';
import { Watchdog, watchdogUsecFromEnv } from '../../../src/systemd/watchdog.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('systemd-startup');

function pod(name: string, phase: string, opts: { ready?: boolean; waiting?: string } = {}): Pod {
  return {
    metadata: { name, namespace: 'kube-system' },
    spec: { containers: [{ name: 'c', image: 'i' }] },
    status: {
      phase,
      conditions: [{ type: 'Ready', status: opts.ready ? 'True' : 'False' }],
      containerStatuses: [
        {
          name: 'c',
          image: 'i',
          imageID: '',
          restartCount: 3,
          ready: opts.ready ?? false,
          state: opts.waiting
            ? { waiting: { reason: opts.waiting } }
            : { running: { startedAt: '2025-01-01T00:00:00Z' } },
        },
      ],
    },
  };
}

const view = (uid: string, name: string, p: Pod | undefined, synced = true): PodView => ({ uid, name, pod: p, synced });

describe('startupProgress', () => {
  it('is ready once every pod found at start has synced, and says what it waits for', () => {
    const initial = new Set(['a', 'b', 'c', 'd']);
    const pods = [
      view('a', 'etcd-node1', pod('etcd-node1', 'Running', { ready: true })),
      view('b', 'kube-apiserver-node1', pod('kube-apiserver-node1', 'Running', { waiting: 'CrashLoopBackOff' })),
      view('c', 'kube-scheduler-node1', pod('kube-scheduler-node1', 'Running', { ready: true })),
      view('d', 'kube-controller-manager-node1', pod('kube-controller-manager-node1', 'Running', { ready: true })),
    ];
    expect(startupProgress(initial, pods, Date.now())).toEqual({
      ready: true,
      status: '3/4 static pods running; waiting for kube-apiserver-node1 (CrashLoopBackOff)',
    });
    pods[3] = view('d', 'kube-controller-manager-node1', undefined, false);
    const p = startupProgress(initial, pods, Date.now());
    expect(p.ready).toBe(false);
    expect(p.status).toBe(
      '2/4 static pods running; waiting for kube-apiserver-node1 (CrashLoopBackOff), kube-controller-manager-node1 (not synced yet)',
    );
  });

  it('does not wait for a pod found at start whose manifest has gone, and is ready at once with no pods', () => {
    expect(startupProgress(new Set(['gone']), [], 0)).toEqual({ ready: true, status: '0/0 static pods running' });
  });

  it('names a running pod that is not ready as such', () => {
    const s = startupProgress(new Set(), [view('a', 'etcd-node1', pod('etcd-node1', 'Running'))], Date.now()).status;
    expect(s).toBe('0/1 static pods running; waiting for etcd-node1 (Running, 0/1 ready)');
  });
});

describe('Watchdog', () => {
  it('pings every half WatchdogSec while healthy and withholds the ping, saying why once, while not', () => {
    let problem: string | undefined;
    let pings = 0;
    const { logger, lines } = memoryLogger();
    const w = new Watchdog({ usec: 20_000_000, health: () => problem, send: () => pings++, logger });
    expect(w.intervalMs).toBe(10_000);
    w.tick();
    problem = 'PLEG is not healthy';
    w.tick();
    w.tick();
    problem = undefined;
    w.tick();
    expect(pings).toBe(2);
    expect(lines.filter((l) => l.includes('withholding'))).toHaveLength(1);
  });

  it('takes WATCHDOG_USEC only when it is meant for this process', () => {
    expect(watchdogUsecFromEnv({ WATCHDOG_USEC: '30000000' }, 42)).toBe(30_000_000);
    expect(watchdogUsecFromEnv({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42)).toBe(30_000_000);
    expect(watchdogUsecFromEnv({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '7' }, 42)).toBeUndefined();
    expect(watchdogUsecFromEnv({}, 42)).toBeUndefined();
  });
});

describe('journal', () => {
  it('prefixes each line with its syslog priority when stderr is the journal', () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'text', verbosity: 4, journal: true, sink: { write: (l) => lines.push(l) } });
    log.error('e');
    log.warn('w');
    log.info('i');
    log.v(2).info('v');
    expect(lines.map((l) => l.slice(0, 3))).toEqual(['<3>', '<4>', '<6>', '<7>']);
    const json: string[] = [];
    createLogger({ format: 'json', verbosity: 0, journal: true, sink: { write: (l) => json.push(l) } }).error('boom');
    expect(json[0]).toMatch(/^<3>\{"ts":/);
    expect(memoryLogger().logger).toBeDefined();
  });

  it('knows stderr is the journal only when JOURNAL_STREAM names the very file stderr is', () => {
    const file = path.join(tmp, 'stream');
    const fd = fs.openSync(file, 'w');
    try {
      const st = fs.fstatSync(fd);
      expect(stderrIsJournal({ JOURNAL_STREAM: `${st.dev}:${st.ino}` }, fd)).toBe(true);
      expect(stderrIsJournal({ JOURNAL_STREAM: `${st.dev}:${st.ino + 1}` }, fd)).toBe(false);
      expect(stderrIsJournal({}, fd)).toBe(false);
    } finally {
      fs.closeSync(fd);
    }
  });
});

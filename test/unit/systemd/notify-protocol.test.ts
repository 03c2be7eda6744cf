// sd_notify as systemd hears it: the real systemd-notify, driven by the agent's notifier, against
// a socket that records the datagrams and their sender as systemd's does.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';
import { notifierFromEnv, SystemdNotifier, type NotifySender } from '../../../src/systemd/notify.js';
import { startNotifySocket, type NotifySocket } from '../../support/notify-socket.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('notify-protocol');
let sock: NotifySocket;

beforeAll(async () => {
  sock = await startNotifySocket(path.join(tmp, 'notify.sock'));
});
afterAll(async () => {
  await sock?.close();
});

describe('systemd notifications', () => {
  it("arrive as KEY=VALUE datagrams sent in the agent's name", async () => {
    const { logger } = memoryLogger();
    const n = notifierFromEnv({ NOTIFY_SOCKET: sock.path }, logger)!;
    await n.notify({ STATUS: '1/2 static pods running; waiting for etcd-node1 (CrashLoopBackOff)' });
    await n.notify({ READY: '1', STATUS: '2/2 static pods running' });
    const ready = await sock.waitFor((m) => m.fields.READY === '1', 'READY=1', 15_000);
    expect(ready.fields.STATUS).toBe('2/2 static pods running');
    expect(sock.with('STATUS').map((m) => m.fields.STATUS)).toContain(
      '1/2 static pods running; waiting for etcd-node1 (CrashLoopBackOff)',
    );
    // As root, systemd-notify sends with its caller's PID, so systemd attributes it to the main process.
    if (process.getuid?.() === 0) expect(ready.pid).toBe(process.pid);
  });

  it('is absent without NOTIFY_SOCKET, and a socket nobody serves costs one log line, not one per message', async () => {
    const { logger, lines } = memoryLogger();
    expect(notifierFromEnv({}, logger)).toBeUndefined();
    const n = new SystemdNotifier(path.join(tmp, 'nobody.sock'), logger);
    await n.notify({ STATUS: 'a' });
    await n.notify({ STATUS: 'b' });
    expect(lines.filter((l) => l.includes('Could not notify systemd'))).toHaveLength(1);
  });

  it('merges what waits while a message is being sent, the newest value winning', async () => {
    const sent: string[][] = [];
    let release: () => void = () => {};
    const sender: NotifySender = (_s, fields) => {
      sent.push(fields.map(([k, v]) => `${k}=${v}`));
      return sent.length === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
    };
    const n = new SystemdNotifier('/unused', memoryLogger().logger, sender);
    const first = n.notify({ STATUS: 'one' });
    const a = n.notify({ STATUS: 'two' });
    const b = n.notify({ WATCHDOG: '1', STATUS: 'three' });
    release();
    await Promise.all([first, a, b]);
    expect(sent).toEqual([['STATUS=one'], ['WATCHDOG=1', 'STATUS=three']]);
  });

  it('needs no socket file in the file system for an abstract socket name', () => {
    expect(fs.existsSync(path.join(tmp, '@x'))).toBe(false);
    expect(
      notifierFromEnv({ NOTIFY_SOCKET: '@/org/freedesktop/systemd1/notify/1' }, memoryLogger().logger)?.socket,
    ).toBe('@/org/freedesktop/systemd1/notify/1');
  });
});

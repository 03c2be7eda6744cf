// The first call on systemd's private socket, against a peer that behaves as systemd 252's sd-bus
// does: bytes that arrive in the same read as BEGIN stay unparsed until the socket has data again.
import * as codec from '@homebridge/dbus-native/lib/message.js';
import type { DbusMessage } from '@homebridge/dbus-native/lib/message.js';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { DbusConnection } from '../../../src/dbus/dbus-connection.js';

interface StallingPeer {
  socket: string;
  /** Method calls as the peer parsed them, in order. */
  readonly calls: DbusMessage[];
  close(): Promise<void>;
}

/** Answers every method call with an empty return; holds what came with BEGIN until more arrives. */
async function stallingPeer(): Promise<StallingPeer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dbus-peer-'));
  const socket = path.join(dir, 'private');
  const calls: DbusMessage[] = [];
  const clients = new Set<net.Socket>();
  const server = net.createServer((s) => {
    clients.add(s);
    s.on('close', () => clients.delete(s));
    let auth = Buffer.alloc(0);
    let held: Buffer | undefined;
    let running = false;
    const parsed = new PassThrough();
    let serial = 1;
    codec.unmarshalMessages(
      parsed as unknown as net.Socket,
      (m) => {
        if (m.type !== 1) return;
        calls.push(m);
        if ((Number(m.flags) & 1) === 0) s.write(codec.marshall({ type: 2, serial: serial++, replySerial: m.serial }));
      },
      {},
    );
    s.on('data', (chunk: Buffer) => {
      if (running) {
        if (held) parsed.write(held);
        held = undefined;
        parsed.write(chunk);
        return;
      }
      auth = Buffer.concat([auth, chunk]);
      for (let nl = auth.indexOf('\n'); nl >= 0 && !running; nl = auth.indexOf('\n')) {
        const line = auth
          .subarray(0, nl + 1)
          .toString('latin1')
          .replace(/^\0/, '')
          .trim();
        auth = auth.subarray(nl + 1);
        if (line.startsWith('AUTH EXTERNAL')) s.write('OK 0123456789abcdef0123456789abcdef\r\n');
        else if (line === 'BEGIN') {
          running = true;
          // The stall: what followed BEGIN in this read waits for the next read.
          if (auth.length > 0) held = auth;
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    socket,
    calls,
    close: async () => {
      for (const c of clients) c.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('DbusConnection on a peer-to-peer socket', () => {
  let peer: StallingPeer | undefined;
  let conn: DbusConnection | undefined;
  afterEach(async () => {
    conn?.close();
    await peer?.close();
  });

  it('gets the first call answered although the peer held it back with BEGIN, and stops pinging once answered', async () => {
    peer = await stallingPeer();
    conn = await DbusConnection.connect(peer.socket, { peer: 'systemd', hello: false });
    const call = {
      destination: 'org.freedesktop.systemd1',
      path: '/org/freedesktop/systemd1',
      interface: 'org.freedesktop.systemd1.Manager',
    };
    // Both pieces leave in one go, so the peer reads them together, as systemd did under load.
    await expect(conn.call({ ...call, member: 'Subscribe' })).resolves.toEqual([]);
    expect(peer.calls[0]!.member).toBe('Subscribe');
    const pings = peer.calls.filter((m) => m.member === 'Ping');
    expect(pings.length).toBeGreaterThan(0);
    expect(pings.every((m) => m.interface === 'org.freedesktop.DBus.Peer' && (Number(m.flags) & 1) === 1)).toBe(true);

    await expect(conn.call({ ...call, member: 'GetUnit', signature: 's', body: ['kubepods.slice'] })).resolves.toEqual(
      [],
    );
    expect(peer.calls.at(-1)!.member).toBe('GetUnit');
    expect(peer.calls.filter((m) => m.member === 'Ping')).toHaveLength(pings.length);
  });
});

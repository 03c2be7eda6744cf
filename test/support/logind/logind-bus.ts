// A private dbus-daemon with the logind stand-in (logind-standin.py) on it, for node shutdown
// tests: what a node with systemd-logind offers, without touching the machine's bus or logind.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { waitFor } from '../wait.js';

export interface LogindEvent {
  event: 'ready' | 'inhibit' | 'released' | 'prepare' | 'reloaded';
  t: number;
  who?: string;
  pid?: number;
  active?: boolean;
  delayUSec?: number;
  [k: string]: unknown;
}

export interface LogindBus {
  readonly socket: string;
  /** DBUS_SYSTEM_BUS_ADDRESS for processes that should see this bus as the system bus. */
  readonly address: string;
  readonly confDir: string;
  readonly events: LogindEvent[];
  /** Emits PrepareForShutdown(true) or (false). */
  send(word: 'shutdown' | 'cancel'): void;
  /**
   * Another connection (a local user) emits PrepareForShutdown(true) `times` times, on the bus and to
   * each other connection alone; resolves once it has sent them all, with the connections reached.
   */
  forge(times: number): Promise<string[]>;
  waitEvent(pred: (e: LogindEvent) => boolean, what: string, timeoutMs?: number): Promise<LogindEvent>;
  /** Called as each event line is read (to look at other state at that very moment). */
  onEvent(listener: (e: LogindEvent) => void): void;
  stop(): Promise<void>;
}

function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    c.once('exit', () => resolve());
    c.kill('SIGTERM');
  });
}

function forge(address: string, times: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      '/usr/bin/python3',
      [join(import.meta.dirname, 'forge-prepare-for-shutdown.py'), String(times)],
      { env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: address } },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`forging PrepareForShutdown failed: ${stderr || err.message}`));
        resolve((JSON.parse(stdout) as { targets: string[] }).targets);
      },
    );
  });
}

export async function startLogindBus(dir: string, defaultDelaySeconds = 5): Promise<LogindBus> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'logind.conf.d'), { recursive: true });
  const socket = join(dir, 'bus.sock');
  const config = join(dir, 'bus.conf');
  writeFileSync(
    config,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=${socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
`,
  );
  const daemon = spawn('dbus-daemon', [`--config-file=${config}`, '--nofork', '--nopidfile'], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const address = `unix:path=${socket}`;
  const children: ChildProcess[] = [daemon];
  const events: LogindEvent[] = [];
  const listeners: ((e: LogindEvent) => void)[] = [];
  try {
    await waitFor(
      async () => {
        const { existsSync } = await import('node:fs');
        return existsSync(socket);
      },
      { timeoutMs: 10_000, what: 'dbus-daemon to listen' },
    );
    const standin = spawn(
      '/usr/bin/python3',
      [join(import.meta.dirname, 'logind-standin.py'), join(dir, 'logind.conf.d'), String(defaultDelaySeconds)],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, DBUS_SYSTEM_BUS_ADDRESS: address },
      },
    );
    children.push(standin);
    createInterface({ input: standin.stdout! }).on('line', (line) => {
      try {
        const e = JSON.parse(line) as LogindEvent;
        events.push(e);
        for (const l of listeners) l(e);
      } catch {
        // not an event line
      }
    });
    const waitEvent = (pred: (e: LogindEvent) => boolean, what: string, timeoutMs = 20_000): Promise<LogindEvent> =>
      waitFor(() => events.find(pred), { timeoutMs, what, intervalMs: 20 });
    await waitEvent((e) => e.event === 'ready', 'the logind stand-in to own its names');
    return {
      socket,
      address,
      confDir: join(dir, 'logind.conf.d'),
      events,
      send: (word) => standin.stdin!.write(`${word}\n`),
      forge: (times) => forge(address, times),
      waitEvent,
      onEvent: (l) => void listeners.push(l),
      stop: async () => {
        standin.stdin!.end();
        await Promise.all(children.map(stopChild));
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(children.map(stopChild));
    throw err;
  }
}

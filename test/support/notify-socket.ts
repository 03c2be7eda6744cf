// A stand-in for systemd's notification socket: a unix datagram socket that records every message
// with the sender's credentials, and answers BARRIER=1 as systemd does (closing the file
// descriptor that came with it), so that systemd-notify and sd_notify work against it unchanged.
// Node cannot receive unix datagrams; a few lines of Python (python3, in dev/install-deps.sh) can.
import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from './wait.js';

export interface NotifyMessage {
  /** The sender PID from SCM_CREDENTIALS. */
  readonly pid: number;
  /** KEY=VALUE fields of the datagram. */
  readonly fields: Readonly<Record<string, string>>;
  /** When it arrived (Date.now() of the test process). */
  readonly at: number;
}

const RECORDER = `
import array, json, os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(path)
print(json.dumps({"listening": path}), flush=True)
while True:
    data, anc, flags, addr = s.recvmsg(65536, socket.CMSG_SPACE(64 * 4) + socket.CMSG_SPACE(12))
    pid = 0
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds = array.array("i")
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
            for fd in fds:
                os.close(fd)
        elif level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = int.from_bytes(payload[0:4], sys.byteorder)
    print(json.dumps({"pid": pid, "data": data.decode("utf-8", "replace")}), flush=True)
`;

export interface NotifySocket {
  readonly path: string;
  readonly messages: NotifyMessage[];
  /** Messages with a field, e.g. `READY`. */
  with(key: string): NotifyMessage[];
  waitFor(pred: (m: NotifyMessage) => boolean, what: string, timeoutMs?: number): Promise<NotifyMessage>;
  close(): Promise<void>;
}

export async function startNotifySocket(path: string): Promise<NotifySocket> {
  const proc: ChildProcess = spawn('python3', ['-c', RECORDER, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const messages: NotifyMessage[] = [];
  let listening = false;
  let rest = '';
  proc.stdout!.on('data', (c: Buffer) => {
    const parts = (rest + c.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    for (const line of parts) {
      const o = JSON.parse(line) as { listening?: string; pid?: number; data?: string };
      if (o.listening) listening = true;
      else {
        const fields: Record<string, string> = {};
        for (const l of (o.data ?? '').split('\n')) {
          const i = l.indexOf('=');
          if (i > 0) fields[l.slice(0, i)] = l.slice(i + 1);
        }
        messages.push({ pid: o.pid ?? 0, fields, at: Date.now() });
      }
    }
  });
  await waitFor(() => listening || proc.exitCode !== null, { timeoutMs: 10_000, what: 'notify socket listening' });
  if (!listening) throw new Error('the notify socket recorder did not start (is python3 installed?)');
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    path,
    messages,
    with: (key) => messages.filter((m) => key in m.fields),
    waitFor: (pred, what, timeoutMs = 30_000) =>
      waitFor(() => messages.find(pred), { timeoutMs, what: `notification: ${what}` }),
    async close() {
      if (proc.exitCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

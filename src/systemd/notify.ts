// Tells systemd about the agent (sd_notify(3)): READY=1, STATUS=, WATCHDOG=1, STOPPING=1. Node's
// standard library cannot send unix datagrams, and a native addon would not fit in the single
// executable, so each message is sent by systemd-notify (shipped with systemd itself). Run by
// root, it sends with the agent's PID as sender, so systemd attributes it to the main process; the
// unit sets NotifyAccess=all so that it is accepted even when it cannot (not root). systemd-notify
// waits for systemd to have read the message (BARRIER=1), so there is no race with its exit.
// Messages are sent one at a time; fields that wait meanwhile are merged, the newest value winning,
// so a burst of status changes costs one process.
import { execFile } from 'node:child_process';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/error-message.js';

/** A systemd-notify run: resolves, or rejects with the reason. */
export type NotifySender = (socket: string, fields: ReadonlyArray<readonly [string, string]>) => Promise<void>;

const SEND_TIMEOUT_MS = 10_000;

/** STATUS and the other fields are one line each: systemd reads `KEY=VALUE` lines. */
function oneLine(v: string): string {
  return v.replace(/[\r\n]+/g, ' ').slice(0, 1000);
}

export const systemdNotifySender: NotifySender = (socket, fields) =>
  new Promise((resolve, reject) => {
    const args = fields.map(([k, v]) => `${k}=${oneLine(v)}`);
    execFile(
      'systemd-notify',
      args,
      { env: { ...process.env, NOTIFY_SOCKET: socket }, timeout: SEND_TIMEOUT_MS },
      (err, _out, stderr) => {
        if (err) reject(new Error(`systemd-notify: ${stderr.trim() || err.message}`));
        else resolve();
      },
    );
  });

export class SystemdNotifier {
  private pending = new Map<string, string>();
  private sending: Promise<void> | undefined;
  private lastError: string | undefined;

  constructor(
    /** $NOTIFY_SOCKET: a path, or `@name` for an abstract socket. */
    readonly socket: string,
    private readonly logger: Logger,
    private readonly sender: NotifySender = systemdNotifySender,
  ) {}

  /** Queues fields; returns when they (or a newer value of them) have been sent or failed. */
  notify(fields: Readonly<Record<string, string>>): Promise<void> {
    for (const [k, v] of Object.entries(fields)) {
      this.pending.delete(k); // keeps the order of the newest call
      this.pending.set(k, v);
    }
    return this.pump();
  }

  /** Resolves when nothing is waiting to be sent. */
  async flushed(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private pump(): Promise<void> {
    if (this.sending) return this.sending.then(() => this.pump());
    if (this.pending.size === 0) return Promise.resolve();
    const batch = [...this.pending];
    this.pending = new Map();
    this.sending = this.sender(this.socket, batch)
      .then(
        () => {
          if (this.lastError !== undefined)
            this.logger.info('systemd notifications are delivered again', { notifySocket: this.socket });
          this.lastError = undefined;
        },
        (err: unknown) => {
          const reason = errorMessage(err);
          // Once per distinct reason: a missing systemd-notify must not flood the journal.
          if (reason !== this.lastError)
            this.logger.error('Could not notify systemd; the service manager may not see READY or the watchdog', {
              notifySocket: this.socket,
              err: reason,
            });
          this.lastError = reason;
        },
      )
      .finally(() => {
        this.sending = undefined;
      });
    return this.sending.then(() => this.pump());
  }
}

/** The notifier for $NOTIFY_SOCKET, or undefined when not run by systemd as Type=notify. */
export function notifierFromEnv(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  sender?: NotifySender,
): SystemdNotifier | undefined {
  const socket = env.NOTIFY_SOCKET;
  if (socket === undefined || socket === '') return undefined;
  return new SystemdNotifier(socket, logger, sender);
}

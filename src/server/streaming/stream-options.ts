// The query of /exec, /attach and /portForward as the kubelet reads it (remotecommand.NewOptions,
// portforward.NewV4Options): the API server passes `input`, `output`, `error` and `tty` as "1", and
// `command` once per argument; a WebSocket port-forward names its ports in `port`.
import { HttpError } from '../kubelet/reply.js';

export interface RemoteCommandOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export function remoteCommandOptions(q: URLSearchParams): RemoteCommandOptions {
  const tty = q.get('tty') === '1';
  const stdin = q.get('input') === '1';
  const stdout = q.get('output') === '1';
  // A terminal has one output stream: stderr goes to stdout (the kubelet drops the flag too).
  const stderr = q.get('error') === '1' && !tty;
  if (!stdin && !stdout && !stderr) throw new HttpError(400, 'you must specify at least 1 of stdin, stdout, stderr');
  return { stdin, stdout, stderr, tty };
}

/** `command` parameters, each one argument. */
export function execCommand(q: URLSearchParams): string[] {
  const cmd = q.getAll('command');
  if (cmd.length === 0 || cmd[0] === '')
    throw new HttpError(400, 'you must specify a command (one "command" parameter per argument)');
  if (cmd.length > 1024 || cmd.reduce((n, a) => n + a.length, 0) > 256 * 1024)
    throw new HttpError(400, 'command is too long');
  return cmd;
}

/**
 * Ports asked for in the query. A WebSocket client must name at least one (the protocol has no other
 * way); an SPDY client names them per stream, so none here is fine.
 */
export function portForwardPorts(q: URLSearchParams, webSocket: boolean): number[] {
  const ports: number[] = [];
  for (const raw of q.getAll('port')) {
    for (const part of raw.split(',')) {
      const p = /^\d{1,5}$/.test(part) ? Number(part) : NaN;
      if (!(p >= 1 && p <= 65535))
        throw new HttpError(400, `unable to parse "${part}" as a port: must be between 1 and 65535`);
      ports.push(p);
    }
  }
  if (webSocket && ports.length === 0) throw new HttpError(400, 'query parameter "port" is required');
  return ports;
}

export function isWebSocketRequest(headers: Record<string, string | string[] | undefined>): boolean {
  const upgrade = headers.upgrade;
  return typeof upgrade === 'string' && upgrade.toLowerCase() === 'websocket';
}

// One bind attempt of an HTTP server on a TCP address, with a failure said in one line that names
// the port and the setting to change.
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeHttpServer, listenOnce } from './http-server.js';
import { BindError, type BoundEndpoint } from './supervised-listener.js';

export interface PortSetting {
  /** `--healthz-port` */
  readonly flag: string;
  /** `healthzPort` (KubeletConfiguration) */
  readonly field: string;
}

function reason(err: NodeJS.ErrnoException, port: number, setting: PortSetting): string {
  const change = `choose another with ${setting.flag} (${setting.field} in the config file)`;
  if (err.code === 'EADDRINUSE')
    return `port ${port} is already in use by another process (another kubelet or bootlet?); stop it or ${change}`;
  if (err.code === 'EACCES') return `permission denied binding port ${port}; ${change}`;
  if (err.code === 'EADDRNOTAVAIL') return `the address is not on this host; fix the bind address or ${change}`;
  return `${err.message}; ${change}`;
}

export async function bindTcp(
  server: http.Server,
  host: string,
  port: number,
  setting: PortSetting,
): Promise<BoundEndpoint> {
  try {
    await listenOnce(server, { host, port });
  } catch (err) {
    throw new BindError(reason(err as NodeJS.ErrnoException, port, setting));
  }
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return { where: `http://${shownHost}:${addr.port}`, close: () => closeHttpServer(server) };
}

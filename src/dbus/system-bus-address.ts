// Where the system bus and systemd's own socket are.
export const SYSTEM_BUS_SOCKET = '/run/dbus/system_bus_socket';
/** systemd's private socket: what runc and the kubelet use as root; it needs no dbus-daemon. */
export const SYSTEMD_PRIVATE_SOCKET = '/run/systemd/private';

/** The socket path of the system bus: DBUS_SYSTEM_BUS_ADDRESS's unix:path=, as libdbus and sd-bus read it. */
export function systemBusSocket(env: NodeJS.ProcessEnv = process.env): string {
  const address = env.DBUS_SYSTEM_BUS_ADDRESS;
  if (!address) return SYSTEM_BUS_SOCKET;
  for (const entry of address.split(';')) {
    const m = /^unix:(.*)$/.exec(entry);
    const path = m?.[1].split(',').find((kv) => kv.startsWith('path='));
    if (path) return decodeURIComponent(path.slice('path='.length));
  }
  throw new Error(`DBUS_SYSTEM_BUS_ADDRESS ${JSON.stringify(address)} names no unix:path= socket`);
}

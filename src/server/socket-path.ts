// Where `bootlet pods` finds the agent: a unix socket in the root directory, beside the state the
// kubelet keeps there (its own sockets live under it too: pod-resources/, device-plugins/). Its own
// name, not the kubelet's pod-resources path, whose clients expect gRPC. Shared by the agent and
// the client, so it has no other imports.
import { join } from 'node:path';

export const PODS_SOCKET_NAME = 'bootlet.sock';

/** sun_path holds 108 bytes with the terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

export function podsSocketPath(rootDir: string): string {
  return join(rootDir, PODS_SOCKET_NAME);
}

// The kubelet's --container-runtime-endpoint names a unix socket as `unix:///path`; a bare absolute
// path is accepted too, as crictl does.

export interface RuntimeEndpoint {
  /** The endpoint as the operator wrote it, for messages. */
  readonly endpoint: string;
  /** Filesystem path of the socket. */
  readonly socketPath: string;
  /** Address in the form @grpc/grpc-js dials. */
  readonly address: string;
}

export function parseRuntimeEndpoint(endpoint: string): RuntimeEndpoint | { error: string } {
  let socketPath: string;
  if (endpoint.startsWith('unix://')) socketPath = endpoint.slice('unix://'.length);
  else if (endpoint.startsWith('/')) socketPath = endpoint;
  else if (/^[a-z][a-z0-9+.-]*:/i.test(endpoint))
    return { error: `unsupported scheme (only unix:// sockets are supported)` };
  else return { error: 'not a unix socket path (want unix:///path or /path)' };
  if (!socketPath.startsWith('/')) return { error: 'socket path must be absolute (unix:///path)' };
  return { endpoint, socketPath, address: `unix://${socketPath}` };
}

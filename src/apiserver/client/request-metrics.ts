// Where every API server request's outcome is reported, as client-go reports it through
// k8s.io/client-go/tools/metrics: one process-wide adapter, set once by the agent, so that each
// client (the node's, the bootstrap's, the rotation's) is counted without being handed anything.
export type RequestResultAdapter = (code: string, method: string, host: string) => void;

let adapter: RequestResultAdapter | undefined;

/** Installs the adapter (rest_client_requests_total); undefined removes it (tests). */
export function registerRequestResult(a: RequestResultAdapter | undefined): void {
  adapter = a;
}

/** `code` is the HTTP status as text, or `<error>` when no answer came, as client-go labels it. */
export function recordRequestResult(code: number | undefined, method: string, host: string): void {
  adapter?.(code === undefined || code === 0 ? '<error>' : String(code), method, host);
}

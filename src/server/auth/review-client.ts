// The API client the webhooks (TokenReview, SubjectAccessReview) use: the API side's own client
// (the node's one connection) once it is connected; before that, one on the node's own credentials,
// made on the first review, never before, so an agent nobody asks anything costs nothing here. Until
// the API side has an identity (no kubeconfig, or a bootstrap still waiting) there is none, and a
// review fails: a decision that cannot be made is never an "allow".
import { ApiClient } from '../../apiserver/client/client.js';
import type { ClusterConnection } from '../../apiserver/client/kubeconfig.js';

export interface ReviewClient {
  /** POSTs `body` to `path` and returns the server's answer; rejects when the server cannot be asked. */
  create<T>(path: string, body: T): Promise<T>;
}

/** A review that waits longer than this is failed (denied): the caller is a person at a terminal. */
const REVIEW_TIMEOUT_MS = 10_000;

export class NoApiConnectionError extends Error {
  override name = 'NoApiConnectionError';
}

export class NodeReviewClient implements ReviewClient {
  private client: ApiClient | undefined;
  private madeFor: ClusterConnection | undefined;

  constructor(
    private readonly connection: () => ClusterConnection | undefined,
    /** The API side's own client once it is connected: one connection per node (issue 20). */
    private readonly shared: () => Pick<ApiClient, 'create'> | undefined = () => undefined,
  ) {}

  create<T>(path: string, body: T): Promise<T> {
    const shared = this.shared();
    if (shared) {
      this.close();
      return shared.create<T>(path, body);
    }
    const conn = this.connection();
    if (!conn) return Promise.reject(new NoApiConnectionError('the node has no API server credentials yet'));
    if (!this.client || this.madeFor !== conn) {
      this.client?.close();
      this.client = new ApiClient(conn, {
        timeoutMs: REVIEW_TIMEOUT_MS,
        userAgent: 'bootlet/kubelet-api-auth',
        maxSockets: 4,
      });
      this.madeFor = conn;
    }
    return this.client.create<T>(path, body);
  }

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}

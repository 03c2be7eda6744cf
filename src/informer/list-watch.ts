// What a reflector needs of the API client and of whoever knows whether the server is there: a LIST
// and a watch of a path, the gate, and what a failure means. The client's to say (src/apiserver
// list-watch-errors.ts, connectivity.ts); the reflector knows nothing of HTTP.
import type { ObjectMeta } from 'kubernetes-types/meta/v1';

export interface ApiObject {
  metadata?: ObjectMeta;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface ListWatchClient {
  list<T>(path: string, query?: Record<string, string | number | boolean | undefined>): Promise<T>;
  watch<T>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: { type: WatchEventType; object: T }) => void,
  ): { readonly done: Promise<void>; stop(): void };
}

/** Whether the server is there (src/apiserver/connectivity.ts); its owner calls `serverBack` when it is again. */
export interface ListWatchGate {
  readonly usable: boolean;
}

/**
 * What a failed LIST or watch means: `expired` (410: history gone), `unreadable` (an event could
 * not be read), `too-large` (an answer over the client's cap), `refused` (the server said no as
 * asked) and `other` list again; `unavailable` (no proper server) watches again from where it was.
 */
export type ListWatchFailure = 'expired' | 'unreadable' | 'too-large' | 'refused' | 'unavailable' | 'other';

export interface ListWatchErrors {
  kind(e: unknown): ListWatchFailure;
  /** One line for logs. */
  describe(e: unknown): string;
}

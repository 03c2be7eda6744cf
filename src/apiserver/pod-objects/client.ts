// What the pod objects need of the API client (src/apiserver/client.ts has it: the one connection
// per node, its deadlines and response caps) and of the Connectivity. Declared narrow so the unit
// tests can drive a fake.
import type { Query, WatchEvent, WatchHandle } from '../client/client.js';

export interface PodObjectsClient {
  list<T>(path: string, query?: Query): Promise<T>;
  watch<T>(path: string, query: Query, onEvent: (e: WatchEvent<T>) => void): WatchHandle;
  create<T>(path: string, body: T): Promise<T>;
}

/** Whether the server is there; the owner of the reflectors hears onUp once and wakes them all. */
export interface PodObjectsGate {
  readonly usable: boolean;
  onUp(listener: () => void): void;
}

// What the HTTP endpoints read: the status manager's statuses and the PLEG's liveness. Plain
// functions, so the server holds no state of its own and tests can hand it a fake.
import type { PodStatusEntry } from '../status/status-manager.js';

export interface ServerSource {
  /** The static pods with their latest status (StatusManager.all()). */
  statuses(): readonly PodStatusEntry[];
  /** Milliseconds since the PLEG last relisted successfully (Pleg.sinceLastRelistMs()). */
  sinceLastRelistMs(): number;
  /** Unhandled rejections and uncaught exceptions so far (bugs, logged and survived). */
  unexpectedErrors?(): number;
  droppedLogLines?(): number;
}

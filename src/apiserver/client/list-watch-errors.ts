// What a failed LIST or watch of this client means to a reflector (src/informer/reflector.ts),
// read from the client's own errors: an answer that says history is gone (410), a watch line that
// could not be read or was over the cap (an event was lost), a refusal, or no proper server.
import type { ListWatchErrors, ListWatchFailure } from '../../informer/list-watch.js';
import { ApiError, describeError, isRefused, isUnavailable, TransportError } from './api-error.js';
import { RESPONSE_TOO_LARGE } from './response-body.js';

function kind(e: unknown): ListWatchFailure {
  if (e instanceof ApiError && (e.code === 410 || e.reason === 'Expired' || e.reason === 'Gone')) return 'expired';
  if (e instanceof TransportError && e.kind === 'other' && e.message.startsWith('watch stream: bad JSON line'))
    return 'unreadable';
  if (e instanceof ApiError && e.reason === RESPONSE_TOO_LARGE) return 'too-large';
  if (isRefused(e)) return 'refused';
  if (isUnavailable(e)) return 'unavailable';
  return 'other';
}

export const API_LIST_WATCH_ERRORS: ListWatchErrors = { kind, describe: describeError };

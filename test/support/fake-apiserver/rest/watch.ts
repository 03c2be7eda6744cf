import { toTable } from '../print/table.js';
import { apiVersionOf } from '../resources.js';
import { parseFieldSelector, parseLabelSelector } from '../selectors.js';
import { expired, badRequest } from '../status.js';
import type { StoreEvent } from '../store.js';
import { meta, type Json, type JsonObject, type KObject } from '../types.js';
import type { Chaos } from '../chaos.js';
import type { Res } from '../http.js';
import type { RestContext } from './context.js';
import { includeObject, wantsTable } from './output.js';

type WatchType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** Registers a watcher on the response; returns a function that ends it (server stop). */
export function serveWatch(ctx: RestContext, onEnd: (end: (how?: 'timeout') => void) => () => void): void {
  const { rt, namespace, query, name } = ctx.req;
  const labels = parseLabelSelector(query.get('labelSelector'));
  let fieldText = query.get('fieldSelector') ?? '';
  if (name) fieldText = fieldText ? `${fieldText},metadata.name=${name}` : `metadata.name=${name}`;
  const fields = parseFieldSelector(fieldText, rt.storageKey);
  const matches = (o: KObject | undefined): boolean =>
    !!o && (!rt.namespaced || !namespace || meta(o).namespace === namespace) && labels(o) && fields(o);
  const table = wantsTable(ctx.accept);
  const include = includeObject(query);
  const bookmarks = query.get('allowWatchBookmarks') === 'true';
  const initialEvents = query.get('sendInitialEvents') === 'true';
  const rvParam = query.get('resourceVersion') ?? '';
  const timeout = Number(query.get('timeoutSeconds') ?? '0');
  if (initialEvents && !bookmarks)
    throw badRequest('sendInitialEvents is only supported with allowWatchBookmarks=true');

  const res = ctx.res;
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  let headersSent = false;
  const send = (type: WatchType, object: Json): void => {
    if (res.writableEnded) return;
    res.write(JSON.stringify({ type, object }) + '\n');
  };
  const sendObject = (type: WatchType, o: KObject): void => {
    if (!table) return send(type, o as unknown as JsonObject);
    send(type, toTable(rt, [o], meta(o).resourceVersion, include, headersSent));
    headersSent = true;
  };
  const bookmark = (rv: number, annotations?: Record<string, string>): void => {
    const m: JsonObject = { resourceVersion: String(rv) };
    if (annotations) m.annotations = annotations;
    send('BOOKMARK', { kind: rt.kind, apiVersion: apiVersionOf(rt), metadata: m });
  };

  const deliver = (ev: StoreEvent): void => {
    if (ev.storageKey !== rt.storageKey) return;
    const now = matches(ev.object);
    const before = ev.type === 'ADDED' ? false : matches(ev.prev);
    if (ev.type === 'DELETED') {
      if (before) sendObject('DELETED', ev.object);
    } else if (now && before) sendObject('MODIFIED', ev.object);
    else if (now) sendObject('ADDED', ev.object);
    else if (before) sendObject('DELETED', ev.object);
  };

  const store = ctx.store;
  const startRv = store.currentRv;
  let backlog: StoreEvent[] = [];
  if (rvParam === '' || rvParam === '0' || initialEvents) {
    for (const o of store.list(rt.storageKey, rt.namespaced && namespace ? namespace : undefined))
      if (matches(o)) sendObject('ADDED', o);
    if (initialEvents) bookmark(startRv, { 'k8s.io/initial-events-end': 'true' });
  } else {
    const from = Number(rvParam);
    const events = Number.isNaN(from) ? undefined : store.eventsSince(from);
    if (!events) {
      // As the watch cache does: the stream opens, then says 410 Expired in an ERROR event and ends.
      send('ERROR', expired(rvParam, String(store.oldestServableRv)).toStatus());
      res.end();
      return;
    }
    backlog = events;
  }
  for (const ev of backlog) deliver(ev);
  const unsubscribe = store.subscribe(deliver);
  let timer: NodeJS.Timeout | undefined;
  const end = (how?: 'timeout'): void => {
    // As the watch cache does, a watch that asked for bookmarks gets one as it times out: the
    // client's next watch starts from there, however long nothing it watches changed.
    if (how === 'timeout' && bookmarks) bookmark(store.currentRv);
    unsubscribe();
    if (timer) clearTimeout(timer);
    unregister();
    if (!res.writableEnded) res.end();
  };
  const unregister = onEnd(end);
  if (timeout > 0) timer = setTimeout(() => end('timeout'), timeout * 1000);
  res.on('close', () => end());

  const fault = ctx.chaos?.watchFault;
  if (fault === 'end-after-first-event' || fault === 'cut-after-first-event') {
    bookmark(store.currentRv);
    if (fault === 'end-after-first-event') end();
    else if (res.destroy) res.destroy();
    else res.stream?.destroy();
  } else if (fault === 'huge-line' && ctx.chaos) void sendHugeLine(res, ctx.chaos);
}

/** One event line that never ends: an object with a string field of `hugeLineBytes`, no newline, written as fast as the client reads. */
async function sendHugeLine(res: Res, chaos: Pick<Chaos, 'hugeLineBytes' | 'hugeLineBytesSent'>): Promise<void> {
  let closed = false;
  let wake: (() => void) | undefined;
  res.on('close', () => {
    closed = true;
    wake?.();
  });
  const piece = 'x'.repeat(64 * 1024);
  res.write('{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"');
  for (let sent = 0; sent < chaos.hugeLineBytes && !closed && !res.writableEnded; sent += piece.length) {
    const more = res.write(piece);
    chaos.hugeLineBytesSent += piece.length;
    if (!more && !closed) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        res.once('drain', resolve);
      });
      wake = undefined;
    }
  }
}

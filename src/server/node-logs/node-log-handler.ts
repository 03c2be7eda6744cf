// /logs/ on the kubelet API (the kubelet's logServer): with enableSystemLogHandler the node's log
// directory, and with enableSystemLogQuery the node log query of KEP-2258 on top of it: a
// ?query= of services answers from the journal (and, for a service the journal does not know,
// from its file in /var/log), a ?query= of one file answers with that file. Errors in the
// kubelet's words and codes: 400 for a query that cannot be read, 406 for one that cannot run.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { constants as zlib, createGzip } from 'node:zlib';
import type { Logger } from '../../log/logger.js';
import { replyText } from '../kubelet/reply.js';
import { serveLogPath } from './file-server.js';
import { parseGoQuery } from './go-url-values.js';
import { copyJournal, journalctlArgs, journalUnits, logsToJournal } from './journal.js';
import { goStatProblem, scopedJoin } from './log-dir.js';
import {
  aggregateErrors,
  hasOptions,
  parseNodeLogQuery,
  validateNodeLogQuery,
  type NodeLogQuery,
} from './node-log-query.js';
import { goRegexpProblem } from './regexp-syntax.js';
import { copyServiceLogFiles } from './service-log-files.js';

/** The kubelet's deadline for one query, journal and files together. */
export const NODE_LOG_QUERY_DEADLINE_MS = 30_000;

export interface NodeLogDeps {
  /** /var/log/ (NODE_LOG_DIR); another directory in tests. */
  readonly logDir: string;
  readonly enableSystemLogHandler: boolean;
  readonly enableSystemLogQuery: boolean;
  /** The journalctl to run ("journalctl": the one on PATH). */
  readonly journalctl: string;
  readonly logger: Logger;
}

async function fileProblem(logDir: string, file: string): Promise<string | undefined> {
  try {
    return await goStatProblem(await scopedJoin(logDir, file));
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** journalServer.ServeHTTP and nodeLogQuery.Copy: everything is said in the 200 answer's body. */
async function serveQuery(
  q: NodeLogQuery,
  req: IncomingMessage,
  res: ServerResponse,
  d: NodeLogDeps,
  clientGone: AbortSignal,
): Promise<void> {
  const gzip = req.headers['accept-encoding'] === 'gzip';
  res.writeHead(200, {
    'Content-Type': 'text/plain;charset=UTF-8',
    ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  let out: Writable = res;
  if (gzip) {
    const gz = createGzip({ level: zlib.Z_BEST_SPEED });
    gz.on('error', () => res.destroy());
    gz.pipe(res);
    out = gz;
  }
  const say = (text: string): void => {
    if (!clientGone.aborted) out.write(text);
  };
  const signal = AbortSignal.any([clientGone, AbortSignal.timeout(NODE_LOG_QUERY_DEADLINE_MS)]);
  const units = await journalUnits(d.journalctl, signal);
  const journal = q.services.filter((s) => logsToJournal(units, s));
  const files = q.services.filter((s) => !logsToJournal(units, s));
  d.logger.v(2).info('Node log query', {
    journal: journal.join(' '),
    files: files.join(' '),
    options: hasOptions(q.options),
  });
  if (journal.length > 0) {
    const run = await copyJournal(d.journalctl, journalctlArgs(q.options, journal), out, signal);
    if (run === 'not-started' && (q.options.boot ?? 0n) === 0n) say('\nerror: journal output not available\n');
  }
  if (files.length > 0 && hasOptions(q.options))
    say(`\noptions present and query resolved to log files for [${files.join(' ')}]\ntry without specifying options\n`);
  else if (files.length > 0) await copyServiceLogFiles(d.logDir, files, out, signal);
  out.end();
}

/**
 * GET /logs/<path>?<query>. `path` is the request path below /logs (`/` for /logs/ itself, `''`
 * for /logs without its slash); `rawQuery` the query as sent.
 */
export async function serveNodeLogs(
  path: string,
  rawQuery: string,
  req: IncomingMessage,
  res: ServerResponse,
  d: NodeLogDeps,
): Promise<void> {
  if (!d.enableSystemLogHandler) return replyText(res, 405, 'logs endpoint is disabled.\n');
  if (path === '') {
    // The handler's pattern is /logs/ (a ServeMux subtree): the bare name redirects to it.
    res.writeHead(301, { Location: rawQuery ? `/logs/?${rawQuery}` : '/logs/' });
    res.end();
    return;
  }
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  let served = path;
  if (d.enableSystemLogQuery) {
    const parsed = parseNodeLogQuery(parseGoQuery(rawQuery));
    if (parsed.errors.length > 0) return replyText(res, 400, `${aggregateErrors(parsed.errors)}\n`);
    const q = 'query' in parsed ? parsed.query : undefined;
    if (q) {
      if (path !== '/') return replyText(res, 406, 'path not allowed in query mode\n');
      const errors = await validateNodeLogQuery(q, {
        fileProblem: (f) => fileProblem(d.logDir, f),
        patternProblem: goRegexpProblem,
      });
      if (errors.length > 0) return replyText(res, 406, `${aggregateErrors(errors)}\n`);
      if (q.services.length > 0) return serveQuery(q, req, res, d, gone.signal);
      // One file (validation allows no other case here): served as if asked by its path.
      served = q.files[0]!;
    }
  }
  await serveLogPath(d.logDir, served, rawQuery, req, res, gone.signal);
}

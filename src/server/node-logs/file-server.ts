// The node's log directory over HTTP as the kubelet serves it (net/http's FileServer on /var/log
// under /logs/): a directory is listed (or its index.html served), a file sent whole, with Go's
// redirects, status texts and listing markup. Unlike Go's http.Dir, nothing is read that does not
// resolve inside the directory (a symlink that leads out is 403).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { posix } from 'node:path';
import type { Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { replyText } from '../kubelet/reply.js';
import { copyInto } from './copy-stream.js';
import { GoPathError, isNotExist, openInside, type OpenedLogEntry } from './log-dir.js';

/** path.Clean of a rooted path: no `.`, `..` or doubled slashes, no trailing slash but the root's. */
function clean(p: string): string {
  const n = posix.normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
}

function toHttpError(res: ServerResponse, e: unknown): void {
  if (isNotExist(e)) return replyText(res, 404, '404 page not found\n');
  const code = e instanceof GoPathError ? e.code : '';
  if (code === 'EACCES' || code === 'EPERM') return replyText(res, 403, '403 Forbidden\n');
  replyText(res, 500, '500 Internal Server Error\n');
}

function localRedirect(res: ServerResponse, rawQuery: string, location: string): void {
  res.writeHead(301, { Location: rawQuery ? `${location}?${rawQuery}` : location });
  res.end();
}

/** net/url's escaping of a path (encodePath): only what is neither unreserved nor reserved, and `?`. */
function escapePath(p: string): string {
  let out = '';
  for (const byte of Buffer.from(p, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~$&+,/:;=@]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  // url.URL.String(): a first segment with a colon would read as a scheme.
  const colon = out.indexOf(':');
  return colon >= 0 && !out.slice(0, colon).includes('/') ? `./${out}` : out;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };
const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** Go's built-in extension types (mime.TypeByExtension without the node's /etc/mime.types). */
const EXTENSION_TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.gif': 'image/gif',
  '.htm': 'text/html; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.jpeg': 'image/jpeg',
  '.jpg': 'image/jpeg',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.mjs': 'text/javascript; charset=utf-8',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.wasm': 'application/wasm',
  '.xml': 'text/xml; charset=utf-8',
};

/** The part of http.DetectContentType a log directory needs: gzip, text, or binary. */
function sniff(head: Buffer): string {
  if (head.length >= 3 && head[0] === 0x1f && head[1] === 0x8b && head[2] === 0x08) return 'application/x-gzip';
  for (const b of head) {
    if (b <= 0x08 || b === 0x0b || (b >= 0x0e && b <= 0x1a) || (b >= 0x1c && b <= 0x1f))
      return 'application/octet-stream';
  }
  return 'text/plain; charset=utf-8';
}

/** checkIfModifiedSince: unmodified since the client's copy (whole seconds, as HTTP dates are). */
function notModified(req: IncomingMessage, stats: Stats): boolean {
  const since = req.headers['if-modified-since'];
  if (!since || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const t = Date.parse(since);
  return !Number.isNaN(t) && Math.floor(stats.mtimeMs / 1000) * 1000 <= t;
}

async function sendFile(
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  file: OpenedLogEntry,
  signal: AbortSignal,
): Promise<void> {
  const lastModified = file.stats.mtime.toUTCString();
  if (notModified(req, file.stats)) {
    res.writeHead(304, { 'Last-Modified': lastModified });
    res.end();
    return;
  }
  let type = EXTENSION_TYPES[posix.extname(name).toLowerCase()];
  if (!type) {
    const head = Buffer.alloc(512);
    const { bytesRead } = await file.handle.read(head, 0, 512, 0);
    type = sniff(head.subarray(0, bytesRead));
  }
  res.writeHead(200, {
    'Content-Type': type,
    'Last-Modified': lastModified,
    'Content-Length': String(file.stats.size),
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  // The length sent is the one stat gave: a log that grows meanwhile is sent as it was.
  await copyInto(
    file.handle.createReadStream({ start: 0, end: Math.max(0, file.stats.size - 1), autoClose: false }),
    res,
    signal,
  );
  res.end();
}

async function sendListing(req: IncomingMessage, res: ServerResponse, dir: OpenedLogEntry): Promise<void> {
  if (notModified(req, dir.stats)) {
    res.writeHead(304, { 'Last-Modified': dir.stats.mtime.toUTCString() });
    res.end();
    return;
  }
  let entries;
  try {
    // The open directory itself, whatever its name now leads to.
    entries = await readdir(`/proc/self/fd/${dir.handle.fd}`, { withFileTypes: true });
  } catch {
    return replyText(res, 500, 'Error reading directory\n');
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let body = '<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n';
  for (const e of entries) {
    const name = e.isDirectory() ? `${e.name}/` : e.name;
    body += `<a href="${escapePath(name)}">${escapeHtml(name)}</a>\n`;
  }
  body += '</pre>\n';
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Last-Modified': dir.stats.mtime.toUTCString(),
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * FileServer.ServeHTTP for `urlPath` (the request path below /logs/), the log directory being
 * `root`. `signal` ends a long transfer when the client has gone.
 */
export async function serveLogPath(
  root: string,
  urlPath: string,
  rawQuery: string,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const url = urlPath.startsWith('/') ? urlPath : `/${urlPath}`;
  if (url.endsWith('/index.html')) return localRedirect(res, rawQuery, './');
  const name = clean(url);
  let entry: OpenedLogEntry;
  try {
    entry = await openInside(root, posix.join(root, name));
  } catch (e) {
    return toHttpError(res, e);
  }
  try {
    const isDir = entry.stats.isDirectory();
    if (isDir && !url.endsWith('/')) return localRedirect(res, rawQuery, `${posix.basename(url)}/`);
    if (!isDir && url.endsWith('/')) {
      const base = posix.basename(url);
      return localRedirect(res, rawQuery, `../${base === '/' || base === '.' ? '' : base}`);
    }
    if (!isDir) return await sendFile(req, res, name, entry, signal);
    // A directory with an index.html is that page.
    let index: OpenedLogEntry | undefined;
    try {
      index = await openInside(root, posix.join(root, name, 'index.html'));
    } catch {
      index = undefined;
    }
    if (index?.stats.isFile()) {
      try {
        return await sendFile(req, res, 'index.html', index, signal);
      } finally {
        await index.handle.close();
      }
    }
    await index?.handle.close();
    await sendListing(req, res, entry);
  } finally {
    await entry.handle.close();
  }
}

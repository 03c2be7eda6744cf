// staticPodURL: the kubelet's HTTP manifest source (pkg/kubelet/config/http.go). A Pod or a v1
// PodList is fetched from the URL, with staticPodURLHeader, every httpCheckFrequency, and read with
// the file source's rules:
// - the same bounds: 10 MiB (the kubelet's maxConfigLength), a 10 s deadline for the whole request
//   (the kubelet's client timeout), the same parser limits, big answers decoded off the event loop;
// - an answer that cannot be used (unreachable, not 200, empty, too large, refused) changes
//   nothing: every pod the URL gave keeps running. The kubelet keeps them too, except on an empty
//   body, which it takes for "no pods"; bootlet takes it for a broken answer;
// - identity as the kubelet gives it: UID from the content and `url:<URL>` (no node name, no file),
//   `kubernetes.io/config.source: http`, no NoExecute toleration;
// - an outage is one log line when it begins and one when it ends, not one per poll.
// An unchanged answer costs a digest; only a different one is decoded.
import { createHash } from 'node:crypto';
import type { Logger } from '../log/logger';
import { createManifestDecoder, type ManifestDecoder } from './decode/decode-off-thread';
import { sameStaticPod } from './pod-config/file-pods';
import { completeManifest } from './manifest';
import { MAX_MANIFEST_BYTES } from './read-manifest';
import type { ConfigSourceEvents, PodUpdate, StaticPod } from './types';
import { errorMessage } from '../util/error-message';

/** The kubelet's http.Client timeout for the manifest URL. */
export const HTTP_SOURCE_TIMEOUT_MS = 10_000;

export interface HttpSourceOptions {
  readonly url: string;
  /** staticPodURLHeader: each name with its values, sent in order. */
  readonly headers?: Readonly<Record<string, readonly string[]>>;
  readonly nodeName: string;
  /** httpCheckFrequency, 20 s by default. */
  readonly checkFrequencyMs?: number;
  readonly logger: Logger;
  readonly events: ConfigSourceEvents;
  readonly now?: () => Date;
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

export interface HttpSource {
  /** One poll now; resolves when it is done. */
  poll(): Promise<void>;
  /** True once an answer has been used: the source's pods are known. */
  answered(): boolean;
  stop(): Promise<void>;
}

type Fetched = { ok: true; body: Buffer } | { ok: false; reason: string };

/** The URL as it may be logged: no user or password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '***';
      u.password = '';
    }
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

async function fetchBounded(
  url: string,
  headers: Headers,
  timeoutMs: number,
  maxBytes: number,
  stop: AbortSignal,
): Promise<Fetched> {
  const deadline = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([deadline, stop]);
  try {
    const res = await fetch(url, { headers, signal, redirect: 'follow' });
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      return { ok: false, reason: `${res.status} ${res.statusText}`.trim() };
    }
    const length = Number(res.headers.get('content-length') ?? NaN);
    if (length > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      return { ok: false, reason: `the answer is larger than the ${maxBytes / (1024 * 1024)} MiB limit` };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body ?? []) {
      size += (chunk as Uint8Array).byteLength;
      if (size > maxBytes) {
        await res.body?.cancel().catch(() => undefined);
        return { ok: false, reason: `the answer is larger than the ${maxBytes / (1024 * 1024)} MiB limit` };
      }
      chunks.push(Buffer.from(chunk as Uint8Array));
    }
    return { ok: true, body: Buffer.concat(chunks, size) };
  } catch (err) {
    if (deadline.aborted) return { ok: false, reason: `no complete answer within ${timeoutMs / 1000} s` };
    if (stop.aborted) return { ok: false, reason: 'stopping' };
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, reason: cause?.code ?? cause?.message ?? errorMessage(err) };
  }
}

export function startHttpSource(opts: HttpSourceOptions): HttpSource {
  const shownUrl = redactedUrl(opts.url);
  const log = opts.logger.with({ source: 'http', url: shownUrl });
  const now = opts.now ?? (() => new Date());
  const every = opts.checkFrequencyMs ?? 20_000;
  const timeoutMs = opts.timeoutMs ?? HTTP_SOURCE_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? MAX_MANIFEST_BYTES;
  const headers = new Headers();
  for (const [name, values] of Object.entries(opts.headers ?? {})) for (const v of values) headers.append(name, v);
  const decoder: ManifestDecoder = createManifestDecoder();

  /** The pods of the last used answer, by key. */
  let current = new Map<string, StaticPod>();
  let lastDigest: string | undefined;
  let outageSince: Date | undefined;
  let used = false;
  let stopped = false;
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const outage = (reason: string): void => {
    if (outageSince === undefined) {
      outageSince = now();
      log.error(
        'Cannot read static pods from staticPodURL; the pods it gave keep running, retrying every httpCheckFrequency',
        { err: reason },
      );
    } else log.v(4).info('staticPodURL still unreadable', { err: reason });
  };

  /** An answer that came but cannot be used: said once per distinct answer. */
  const refused = (digest: string, reason: string, pos?: { line?: number; column?: number }): void => {
    if (lastDigest === digest) return;
    lastDigest = digest;
    log.error('Static pods from staticPodURL refused; the pods it gave keep running', {
      err: reason,
      line: pos?.line,
      column: pos?.column,
    });
    opts.events.error({ file: shownUrl, message: reason, line: pos?.line, column: pos?.column });
  };

  const apply = (pods: StaticPod[]): void => {
    const next = new Map<string, StaticPod>();
    for (const p of pods) {
      const first = next.get(p.key);
      if (first) {
        log.error('Two pods of the staticPodURL answer have one name; the first is used', {
          pod: p.key,
          uid: p.uid,
          keptUID: first.uid,
        });
        continue;
      }
      const prev = current.get(p.key);
      // An unchanged pod keeps its stored object, and with it the time it was first seen.
      next.set(p.key, prev && sameStaticPod(prev, p) ? prev : p);
    }
    const updates: PodUpdate[] = [];
    for (const [key, prev] of current) if (!next.has(key)) updates.push({ op: 'REMOVE', pod: prev });
    for (const [key, pod] of next) {
      const prev = current.get(key);
      if (!prev) updates.push({ op: 'ADD', pod });
      else if (prev !== pod) updates.push({ op: 'UPDATE', pod, previous: prev });
    }
    current = next;
    for (const u of updates) {
      if (u.op === 'REMOVE') log.info('Static pod removed from desired set', { pod: u.pod.key, uid: u.pod.uid });
      else log.info('Static pod from staticPodURL accepted', { pod: u.pod.key, uid: u.pod.uid });
      if (!stopped) opts.events.update(u);
    }
  };

  const pollOnce = async (): Promise<void> => {
    const got = await fetchBounded(opts.url, headers, timeoutMs, maxBytes, stopping.signal);
    if (stopped) return;
    if (!got.ok) return outage(got.reason);
    if (outageSince !== undefined) {
      log.info('staticPodURL answers again', {
        unreadableFor: `${Math.round((now().getTime() - outageSince.getTime()) / 1000)}s`,
      });
      outageSince = undefined;
    }
    const digest = createHash('sha256').update(got.body).digest('hex');
    if (digest === lastDigest) return;
    if (got.body.length === 0) return refused(digest, 'the answer is empty');
    const decoded = await decoder.decodeList(got.body);
    if (stopped) return;
    if (!decoded.ok) return refused(digest, decoded.message, decoded);
    const pods: StaticPod[] = [];
    for (const [i, d] of decoded.pods.entries()) {
      const done = completeManifest(opts.url, { ok: true, pod: d.pod, warnings: d.warnings }, opts.nodeName, now(), {
        kind: 'http',
        url: opts.url,
      });
      if ('error' in done)
        return refused(digest, decoded.list ? `items[${i}]: ${done.error.message}` : done.error.message);
      for (const w of done.warnings)
        log.warn('Static pod from staticPodURL warning', { pod: done.pod.key, warning: w });
      pods.push(done.pod);
    }
    lastDigest = digest;
    apply(pods);
    if (!used) {
      used = true;
      opts.events.ready();
    }
  };

  const poll = (): Promise<void> => {
    running ??= pollOnce()
      .catch((err: unknown) => outage(errorMessage(err)))
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const loop = (): void => {
    void poll().finally(() => {
      if (!stopped) timer = setTimeout(loop, every);
    });
  };
  log.info('Reading static pods from staticPodURL', { every: `${every / 1000}s` });
  loop();

  return {
    poll,
    answered: () => used,
    async stop() {
      stopped = true;
      stopping.abort();
      if (timer) clearTimeout(timer);
      await running;
      await decoder.close();
    },
  };
}

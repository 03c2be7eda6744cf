// postStart and preStop hooks (exec, httpGet, sleep), run as the kubelet's lifecycle handlers do:
// exec through the runtime, HTTP from the node to the pod, sleep on the node.
import http from 'node:http';
import https from 'node:https';
import type { Container, LifecycleHandler } from 'kubernetes-types/core/v1';
import type { RuntimeService } from '../cri/cri-types.js';

export class HookError extends Error {
  override name = 'HookError';
}

export interface HookContext {
  runtime: RuntimeService;
  containerId: string;
  container: Container;
  /** The pod's IP: the node's for hostNetwork pods. */
  podIP: string;
  timeoutSeconds: number;
}

function resolvePort(port: number | string, container: Container): number {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  const named = container.ports?.find((p) => p.name === port);
  if (!named) throw new HookError(`port ${JSON.stringify(port)} is not a named port of container ${container.name}`);
  return named.containerPort;
}

function httpGet(ctx: HookContext, h: NonNullable<LifecycleHandler['httpGet']>): Promise<void> {
  const port = resolvePort(h.port, ctx.container);
  const host = h.host || ctx.podIP;
  const lib = h.scheme === 'HTTPS' ? https : http;
  const headers: Record<string, string> = {};
  for (const hd of h.httpHeaders ?? []) headers[hd.name] = hd.value;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      {
        host,
        port,
        path: h.path || '/',
        method: 'GET',
        headers,
        rejectUnauthorized: false,
        timeout: ctx.timeoutSeconds * 1000,
      },
      (res) => {
        // As the kubelet: only the status matters. The body is not read; dropping the connection
        // here means an endless body costs nothing (draining it would keep reading it forever).
        res.destroy();
        const code = res.statusCode ?? 0;
        if (code >= 200 && code < 400) resolve();
        else reject(new HookError(`HTTP lifecycle hook (${h.path || '/'}) returned status ${code}`));
      },
    );
    req.on('timeout', () =>
      req.destroy(new HookError(`HTTP lifecycle hook (${h.path || '/'}) timed out after ${ctx.timeoutSeconds}s`)),
    );
    req.on('error', (err) =>
      reject(
        err instanceof HookError ? err : new HookError(`HTTP lifecycle hook (${h.path || '/'}) failed: ${err.message}`),
      ),
    );
    req.end();
  });
}

async function execHook(ctx: HookContext, command: string[]): Promise<void> {
  const res = await ctx.runtime.execSync(ctx.containerId, command, ctx.timeoutSeconds);
  if (res.exitCode !== 0) {
    const out = (res.stdout.toString() + res.stderr.toString()).trim().slice(0, 1024);
    throw new HookError(`command ${JSON.stringify(command)} exited with ${res.exitCode}: ${out}`);
  }
}

/** Runs one handler; resolves when it succeeded, rejects with a HookError saying why not. */
export async function runLifecycleHook(ctx: HookContext, handler: LifecycleHandler): Promise<void> {
  if (handler.exec?.command) return execHook(ctx, handler.exec.command);
  if (handler.httpGet) return httpGet(ctx, handler.httpGet);
  if (handler.sleep) {
    const ms = Math.min(handler.sleep.seconds, ctx.timeoutSeconds) * 1000;
    // `seconds: 0` (PodLifecycleSleepActionAllowZero, GA in 1.34) returns at once, with no timer.
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    return;
  }
  if (handler.tcpSocket) throw new HookError('tcpSocket lifecycle hooks are deprecated and not supported');
  throw new HookError('lifecycle hook has no handler');
}

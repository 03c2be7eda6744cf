// The exec handler against a fake RuntimeService, and runProbe's choice of handler, host, port and
// retries.
import type { Container } from 'kubernetes-types/core/v1';
import { describe, expect, it } from 'vitest';
import { CriError, type ExecSyncResponse, type RuntimeService } from '../../../src/cri/cri-types.js';
import { expandProbeCommand, MAX_EXEC_OUTPUT_BYTES, runExecProbe } from '../../../src/prober/exec.js';
import { runProbe, type ProbeHandlers } from '../../../src/prober/run-probe.js';
import type { ProbeOutcome } from '../../../src/prober/types.js';

type ExecCall = { containerId: string; cmd: string[]; timeout: number };

function fakeRuntime(answer: (c: ExecCall) => ExecSyncResponse | Error): {
  runtime: Pick<RuntimeService, 'execSync'>;
  calls: ExecCall[];
} {
  const calls: ExecCall[] = [];
  return {
    calls,
    runtime: {
      execSync: async (containerId, cmd, timeout) => {
        const c = { containerId, cmd, timeout };
        calls.push(c);
        const a = answer(c);
        if (a instanceof Error) throw a;
        return a;
      },
    },
  };
}

const out = (stdout: string, exitCode: number, stderr = ''): ExecSyncResponse => ({
  stdout: Buffer.from(stdout),
  stderr: Buffer.from(stderr),
  exitCode,
});

describe('exec probe', () => {
  it('exit 0 is success, anything else failure, with stdout and stderr as output', async () => {
    const { runtime, calls } = fakeRuntime((c) => (c.cmd[0] === 'true' ? out('ok\n', 0) : out('', 1, 'missing\n')));
    expect(await runExecProbe(runtime, 'c1', ['true'], 2)).toEqual({ result: 'success', output: 'ok\n' });
    expect(await runExecProbe(runtime, 'c1', ['cat', '/tmp/healthy'], 2)).toEqual({
      result: 'failure',
      output: 'missing\n',
    });
    expect(calls[1]).toEqual({ containerId: 'c1', cmd: ['cat', '/tmp/healthy'], timeout: 2 });
  });

  it('caps the output at 10 KiB', async () => {
    const { runtime } = fakeRuntime(() => out('z'.repeat(MAX_EXEC_OUTPUT_BYTES * 2), 1));
    expect((await runExecProbe(runtime, 'c1', ['x'], 1)).output.length).toBe(MAX_EXEC_OUTPUT_BYTES);
  });

  it('a timeout from the runtime is a failure; other runtime errors are unknown', async () => {
    const timedOut = fakeRuntime(() => new CriError('ExecSync', 4, 'timeout 1s exceeded: context deadline exceeded'));
    expect(await runExecProbe(timedOut.runtime, 'c1', ['sleep', '9'], 1)).toEqual({
      result: 'failure',
      output: 'command "sleep 9" timed out after 1s',
    });
    const gone = fakeRuntime(() => new CriError('ExecSync', 5, 'container not found'));
    expect((await runExecProbe(gone.runtime, 'c1', ['x'], 1)).result).toBe('unknown');
  });

  it('expands $(VAR) from literal env values only', () => {
    const c: Container = {
      name: 'a',
      env: [
        { name: 'PORT', value: '8080' },
        { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      ],
    };
    expect(expandProbeCommand(['check', '$(PORT)', '$(POD)', '$$(PORT)'], c)).toEqual([
      'check',
      '8080',
      '$(POD)',
      '$(PORT)',
    ]);
  });
});

function recordingHandlers(answers: ProbeOutcome[]): { h: ProbeHandlers; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const next = async (...args: unknown[]): Promise<ProbeOutcome> => {
    calls.push(args);
    return answers.shift() ?? { result: 'success', output: '' };
  };
  return {
    calls,
    h: {
      exec: (...a) => next('exec', ...a),
      http: (...a) => next('http', ...a),
      tcp: (...a) => next('tcp', ...a),
      grpc: (...a) => next('grpc', ...a),
    },
  };
}

const web: Container = {
  name: 'web',
  ports: [
    { name: 'http', containerPort: 8080 },
    { name: 'grpc', containerPort: 9090 },
  ],
};
const target = { container: web, containerId: 'cid', podIP: '10.0.0.5' };

describe('runProbe', () => {
  it('httpGet: pod IP by default, named port, scheme, path, headers, timeout in ms', async () => {
    const { h, calls } = recordingHandlers([]);
    await runProbe(
      h,
      { httpGet: { port: 'http', path: '/healthz', scheme: 'HTTPS', httpHeaders: [{ name: 'A', value: 'b' }] } },
      target,
      3,
    );
    expect(calls[0]).toEqual([
      'http',
      {
        scheme: 'https',
        host: '10.0.0.5',
        port: 8080,
        path: '/healthz',
        headers: [{ name: 'A', value: 'b' }],
        timeoutMs: 3000,
      },
    ]);
    await runProbe(h, { httpGet: { port: 81, host: 'example.test' } }, target, 1);
    expect(calls[1]).toEqual([
      'http',
      { scheme: 'http', host: 'example.test', port: 81, path: '/', headers: [], timeoutMs: 1000 },
    ]);
  });

  it('tcpSocket and grpc go to the pod IP; grpc with its service name', async () => {
    const { h, calls } = recordingHandlers([]);
    await runProbe(h, { tcpSocket: { port: 'http' } }, target, 1);
    await runProbe(h, { grpc: { port: 9090, service: 'etcd' } }, target, 2);
    expect(calls).toEqual([
      ['tcp', '10.0.0.5', 8080, 1000],
      ['grpc', '10.0.0.5', 9090, 'etcd', 2000],
    ]);
  });

  it('an unknown port name is unknown (thrown away), after retrying as the kubelet', async () => {
    const { h, calls } = recordingHandlers([]);
    expect(await runProbe(h, { tcpSocket: { port: 'nope' } }, target, 1)).toEqual({
      result: 'unknown',
      output: 'port "nope" not found',
    });
    expect(calls).toHaveLength(0);
  });

  it('retries an unknown result up to 3 times, never a failure', async () => {
    const a = recordingHandlers([
      { result: 'unknown', output: 'e1' },
      { result: 'unknown', output: 'e2' },
      { result: 'success', output: 'ok' },
    ]);
    expect(await runProbe(a.h, { exec: { command: ['x'] } }, target, 1)).toEqual({ result: 'success', output: 'ok' });
    expect(a.calls).toHaveLength(3);
    const b = recordingHandlers([{ result: 'failure', output: 'no' }]);
    expect(await runProbe(b.h, { exec: { command: ['x'] } }, target, 1)).toEqual({ result: 'failure', output: 'no' });
    expect(b.calls).toHaveLength(1);
    const c = recordingHandlers(Array.from({ length: 5 }, (_, i) => ({ result: 'unknown' as const, output: `e${i}` })));
    expect(await runProbe(c.h, { exec: { command: ['x'] } }, target, 1)).toEqual({ result: 'unknown', output: 'e2' });
    expect(c.calls).toHaveLength(3);
  });
});

// The tcpSocket and grpc handlers against real local servers.
import * as net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runGrpcProbe } from '../../../src/prober/grpc.js';
import { runTcpProbe } from '../../../src/prober/tcp.js';
import { PROBE_USER_AGENT } from '../../../src/prober/user-agent.js';
import { startGrpcHealth, type Listening } from './servers.js';

let listener: net.Server;
let openPort = 0;
let closedPort = 0;
let health: Listening & { userAgents: string[] };
let slowHealth: Listening & { userAgents: string[] };
let noHealth: Listening & { userAgents: string[] };
const statuses = new Map([
  ['', 'SERVING'],
  ['db', 'NOT_SERVING'],
]);

beforeAll(async () => {
  listener = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
  openPort = (listener.address() as net.AddressInfo).port;
  closedPort = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  health = await startGrpcHealth(statuses);
  slowHealth = await startGrpcHealth(statuses, { delayMs: 3000 });
  noHealth = await startGrpcHealth(statuses, { withoutHealth: true });
});

afterAll(async () => {
  await new Promise<void>((r) => (listener ? listener.close(() => r()) : r()));
  await health?.close();
  await slowHealth?.close();
  await noHealth?.close();
});

describe('tcpSocket probe', () => {
  it('succeeds when the port accepts a connection', async () => {
    expect(await runTcpProbe('127.0.0.1', openPort, 1000)).toEqual({ result: 'success', output: '' });
  });

  it('fails with the dial error when nothing listens', async () => {
    expect(await runTcpProbe('127.0.0.1', closedPort, 1000)).toEqual({
      result: 'failure',
      output: `dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    });
  });

  it('fails when the connection is not established within the timeout', async () => {
    // A non-routable address (TEST-NET-1): the SYN goes nowhere.
    const r = await runTcpProbe('192.0.2.1', 80, 300);
    expect(r.result).toBe('failure');
  });
});

describe('grpc probe', () => {
  it('SERVING is success, with the kube-probe user agent', async () => {
    expect(await runGrpcProbe('127.0.0.1', health.port, '', 1000)).toEqual({
      result: 'success',
      output: 'service healthy',
    });
    expect(health.userAgents.at(-1)).toMatch(new RegExp(`^${PROBE_USER_AGENT.replace('.', '\\.')}`));
  });

  it('asks for the named service; NOT_SERVING is a failure', async () => {
    expect(await runGrpcProbe('127.0.0.1', health.port, 'db', 1000)).toEqual({
      result: 'failure',
      output: 'service unhealthy (responded with "NOT_SERVING")',
    });
  });

  it('an error status (unknown service) is a failure', async () => {
    const r = await runGrpcProbe('127.0.0.1', health.port, 'nope', 1000);
    expect(r.result).toBe('failure');
    expect(r.output).toMatch(/^error: health rpc probe failed: .*unknown service/);
  });

  it('a server without the health service is a failure that says so', async () => {
    const r = await runGrpcProbe('127.0.0.1', noHealth.port, '', 1000);
    expect(r.result).toBe('failure');
    expect(r.output).toMatch(/does not implement the grpc health protocol/);
  });

  it('a call slower than the timeout is a failure', async () => {
    expect(await runGrpcProbe('127.0.0.1', slowHealth.port, '', 500)).toEqual({
      result: 'failure',
      output: 'timeout: health rpc did not complete within 0.5s',
    });
  });

  it('a port nobody listens on is a failure after at most the timeout', async () => {
    const r = await runGrpcProbe('127.0.0.1', closedPort, '', 500);
    expect(r.result).toBe('failure');
    expect(r.output).toMatch(/^timeout: failed to connect service "127\.0\.0\.1:\d+" within 0\.5s/);
  });
});

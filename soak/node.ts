// The node the soak runs on: one private containerd (dev/containerd.ts) with the test images, a CRI
// client to look at what runs, and one "site" per scenario: its own manifest, root and log
// directories and the packaged agent started on them, restarted as the scenario decides.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { startContainerd, type PrivateContainerd } from '../dev/containerd.js';
import { importTestImages } from '../dev/images.js';
import { connectRuntime, type RuntimeConnection } from '../src/cri/cri-client.js';
import { podsSocketPath } from '../src/server/socket-path.js';
import { freePort } from '../test/support/ports.js';
import { AgentProcess, type AgentExit } from './agent-process.js';
import { expectedPods, removeAllPods, waitConverged, type Convergence, type ExpectedPod } from './census.js';

export class SoakNode {
  private constructor(
    readonly cd: PrivateContainerd,
    readonly cri: RuntimeConnection,
    readonly dir: string,
    /** Where the agents' logs are kept after the run. */
    readonly logDir: string,
  ) {}

  static async start(dir: string, logDir: string): Promise<SoakNode> {
    const cd = await startContainerd({ name: 'soak' });
    try {
      await importTestImages(cd);
      const cri = await connectRuntime(cd.endpoint);
      return new SoakNode(cd, cri, dir, logDir);
    } catch (err) {
      await cd.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.cri.runtime.close();
    await this.cd.stop();
  }
}

export interface SiteOptions {
  /** Extra agent flags (--v=2 and the healthz port are always given). */
  readonly extraArgs?: string[];
}

/** One scenario's agent and directories. */
export class Site {
  readonly dir: string;
  readonly manifests: string;
  readonly rootDir: string;
  readonly podLogsDir: string;
  /** The agent's node name: pods are named <name>-<node>, so each site's pods are its own. */
  readonly nodeName: string;
  private readonly configFile: string;
  private healthzPort = 0;
  agent: AgentProcess | undefined;
  /** Every process this site started, in order. */
  readonly agents: AgentProcess[] = [];
  /** Exits the soak did not cause. */
  readonly crashes: AgentExit[] = [];
  /** Pods whose removal the runtime refuses ("cannot delete running task"), as the agents logged. */
  readonly stuckUids = new Set<string>();

  constructor(
    readonly node: SoakNode,
    readonly name: string,
    private readonly opts: SiteOptions = {},
  ) {
    this.dir = path.join(node.dir, name);
    this.manifests = path.join(this.dir, 'manifests');
    this.rootDir = path.join(this.dir, 'root');
    this.podLogsDir = path.join(this.dir, 'logs', 'pods');
    this.configFile = path.join(this.dir, 'kubelet-config.yaml');
    this.nodeName = `soak-${name}`;
    fs.mkdirSync(this.manifests, { recursive: true });
    fs.writeFileSync(
      this.configFile,
      `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodLogsDir: ${this.podLogsDir}\n`,
    );
  }

  get runtime() {
    return this.node.cri.runtime;
  }

  /** Starts a fresh agent (the previous one must be gone). */
  async launch(extraArgs: string[] = []): Promise<AgentProcess> {
    if (this.agent?.alive) throw new Error(`${this.name}: an agent is still running`);
    if (this.healthzPort === 0) this.healthzPort = await freePort();
    const logFile = path.join(this.node.logDir, `${this.name}-${this.agents.length + 1}.log`);
    const a = new AgentProcess(
      {
        manifests: this.manifests,
        endpoint: this.node.cd.endpoint,
        rootDir: this.rootDir,
        podLogsDir: this.podLogsDir,
        nodeName: this.nodeName,
        configFile: this.configFile,
        healthzPort: this.healthzPort,
        extraArgs: ['--v=2', ...(this.opts.extraArgs ?? []), ...extraArgs],
      },
      logFile,
    );
    void a.exited.then((e) => {
      if (!e.expected) {
        this.crashes.push(e);
        process.stderr.write(
          `soak: ${this.name}: the agent exited on its own (code ${e.code}, signal ${e.signal}); last lines:\n${e.tail.slice(-10).join('\n')}\n`,
        );
      }
    });
    a.on((r) => {
      if (
        typeof r.msg === 'string' &&
        r.msg.startsWith('Pod worker step failed') &&
        String(r.err).includes('cannot delete running task')
      )
        this.stuckUids.add(String(r.podUID));
    });
    this.agent = a;
    this.agents.push(a);
    return a;
  }

  /** Waits until the agent has read its manifests and the runtime back. */
  async ready(timeoutMs = 60_000): Promise<void> {
    const a = this.must();
    await a.waitFor((r) => r.msg === 'Manifests read, adopting running pods', 'ready', timeoutMs);
  }

  async stopAgent(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await this.agent?.kill(signal);
  }

  must(): AgentProcess {
    if (!this.agent) throw new Error(`${this.name}: no agent`);
    return this.agent;
  }

  /** What the manifest directory asks for now. */
  expected(): Map<string, ExpectedPod> {
    return expectedPods(this.manifests, this.nodeName);
  }

  /** Waits until this site's pods match its manifests (read again at every look). */
  converge(
    timeoutMs = 120_000,
    expected: () => ReadonlyMap<string, ExpectedPod> = () => this.expected(),
  ): Promise<Convergence> {
    return waitConverged(this.runtime, expected, timeoutMs, { stuck: this.stuckUids, node: this.nodeName });
  }

  /** BUG lines over every agent this site ran. */
  get bugLines(): number {
    return this.agents.reduce((n, a) => n + a.bugLines, 0);
  }

  /** Written as careful tooling does: beside it under a dot-name, then renamed into place. */
  write(file: string, content: string | Buffer): void {
    const tmp = path.join(this.manifests, `.${file}.soak-tmp`);
    fs.writeFileSync(tmp, content);
    fs.renameSync(tmp, path.join(this.manifests, file));
  }

  remove(file: string): void {
    fs.rmSync(path.join(this.manifests, file), { force: true });
  }

  file(name: string): string {
    return path.join(this.manifests, name);
  }

  /** GET /healthz on the agent's healthz port; false on any failure or after `timeoutMs`. */
  healthz(timeoutMs = 2000): Promise<boolean> {
    return new Promise((resolve) => {
      const req = http.get(
        { host: '127.0.0.1', port: this.healthzPort, path: '/healthz', agent: false, timeout: timeoutMs },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(false));
    });
  }

  /** A metric's value from /metrics on the agent's root-only socket. */
  metric(name: string, timeoutMs = 5000): Promise<number | undefined> {
    return new Promise((resolve) => {
      const req = http.get(
        { socketPath: podsSocketPath(this.rootDir), path: '/metrics', agent: false, timeout: timeoutMs },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => {
            const line = body.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
            resolve(line === undefined ? undefined : Number(line.trim().split(/\s+/).pop()));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(undefined));
    });
  }

  /**
   * Ends the scenario: every manifest removed and its pods gone through the agent (so that the
   * agent's own clean-up is what is exercised), then the agent stopped. Returns what the agent
   * left: pods it should have removed (`orphans`) and pods the runtime refused to remove (`stuck`).
   * Anything left is then removed through the CRI so the next scenario starts on an empty node.
   */
  async clear(timeoutMs = 120_000): Promise<{ orphans: string[]; stuck: string[] }> {
    for (const f of fs.readdirSync(this.manifests))
      fs.rmSync(path.join(this.manifests, f), { force: true, recursive: true });
    if (!this.agent?.alive) await this.launch();
    const c = await this.converge(timeoutMs, () => new Map());
    // Stuck pods are only stopped; give the agent no more time for them than for the rest.
    await this.stopAgent('SIGTERM');
    await removeAllPods(this.runtime, this.nodeName);
    return { orphans: c.last.orphans, stuck: c.last.stuck };
  }
}

// Waits until the server has the node's status and some pods' statuses as the agent computes them now
// (graceful node shutdown: the pods' end and the node's NotReady are told before the node goes down).
// Nothing is polled: a wait is looked at again when something that could end it happened (a node
// status round ended, a mirror pass ended or a mirror changed, a status changed, the server went
// away), and a node round that ended with the status still not there is followed by another.
export interface FlushParts {
  /** Whether requests go to the server now; a wait ends at once when they do not. */
  serverUp(): boolean;
  nodeStatusPosted(): boolean;
  /** A node status round now (one more after the one running). */
  syncNodeStatus(): void;
  podStatusesPosted(uids: readonly string[]): boolean;
  /** Every pod's mirror and status once more. */
  syncPods(): void;
}

export class StatusFlush {
  private readonly waits = new Set<{ check(): void; end(): void }>();

  constructor(private readonly parts: FlushParts) {}

  /** Resolves once all is there, after `timeoutMs`, or at once while the server is away (never rejects). */
  flush(podUids: readonly string[], timeoutMs: number): Promise<void> {
    this.parts.syncNodeStatus();
    this.parts.syncPods();
    return new Promise((resolve) => {
      const wait = {
        end: (): void => {
          clearTimeout(timer);
          this.waits.delete(wait);
          resolve();
        },
        check: (): void => {
          if (!this.parts.serverUp()) wait.end();
          else if (this.parts.nodeStatusPosted() && this.parts.podStatusesPosted(podUids)) wait.end();
        },
      };
      const timer = setTimeout(wait.end, timeoutMs);
      this.waits.add(wait);
      wait.check();
    });
  }

  /** Something that may end a wait happened. */
  recheck(): void {
    for (const wait of [...this.waits]) wait.check();
  }

  /** A node status round ended: another one when a wait still lacks the node's status. */
  nodeRoundEnded(): void {
    this.recheck();
    if (this.waits.size > 0 && this.parts.serverUp() && !this.parts.nodeStatusPosted()) this.parts.syncNodeStatus();
  }

  /** Ends every wait (the API side stops). */
  endAll(): void {
    for (const wait of [...this.waits]) wait.end();
  }
}

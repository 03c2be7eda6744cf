// The file source's desired set and what it tells downstream: the ADD/UPDATE/REMOVE of each change,
// one log line per accepted, refused or removed manifest, the refused files' claims, and the UIDs
// adopted from a kubelet's pods. It touches no file: the source hands it each file's outcome.
import type { Logger } from '../log/logger';
import { FilePods } from './pod-config/file-pods';
import { withAdoptedUid } from './identity';
import { RefusalLog } from './refusal-log';
import type { ConfigSourceEvents, ManifestClaim, ManifestError, PodUpdate, StaticPod } from './types';

/**
 * At most this many changes are told downstream (and logged) per turn of the event loop; the rest
 * follow in the next turns, in order. A flood's removal made one difference of up to 2,000 REMOVEs,
 * whose lines and pod-worker wake-ups held the event loop for a second in one go.
 */
export const TELL_PER_TURN = 32;

/** A change waiting to be told downstream, with the line it is logged with then. */
interface Told {
  readonly update: PodUpdate;
  readonly line?: 'removed' | 'accepted';
}

/** A pod UID as validation allows it (and as it may name a directory). */
const POD_UID = /^[0-9A-Za-z-]{1,36}$/;

/** The UID a file's pod takes instead of the computed one, for exactly that content. */
interface IdentityAlias {
  readonly computedUid: string;
  readonly runtimeUid: string;
}

function claimOf(e: ManifestError): ManifestClaim {
  return e.podKey === undefined
    ? { file: e.file, message: e.message }
    : { file: e.file, podKey: e.podKey, message: e.message };
}

export class FileSourcePods {
  private readonly desired = new FilePods();
  /** Files refused for what they contain or for not being readable (key conflicts are in `desired`). */
  private readonly refused = new Map<string, ManifestError>();
  /** The refused claims as last told downstream. */
  private toldClaims = '[]';
  private readonly aliases = new Map<string, IdentityAlias>();
  /** Files loaded since the last flush, to be logged as accepted unless they lost a key conflict. */
  private readonly loaded = new Set<string>();
  /** While above zero (a full scan runs), changes are collected and told once at the end. */
  private batchDepth = 0;
  /** A hold until the event loop's next turn is open (holdForTurn). */
  private heldForTurn = false;
  private closed = false;
  /** Changes made but not told yet (`outboxHead` is the next), and whether a later turn tells them. */
  private outbox: Told[] = [];
  private outboxHead = 0;
  private tellScheduled = false;
  private readonly refusals: RefusalLog;

  constructor(
    private readonly log: Logger,
    private readonly events: ConfigSourceEvents,
  ) {
    this.refusals = new RefusalLog(log);
  }

  /** Files whose last good pod is held. */
  files(): string[] {
    return this.desired.files();
  }

  /** True while `file`'s last good pod is held. */
  holds(file: string): boolean {
    return this.desired.podOfFile(file) !== undefined;
  }

  /** Runs `fn` (a full scan) and tells downstream what changed once, when it is done. */
  async batch(fn: () => Promise<void>): Promise<void> {
    this.batchDepth++;
    try {
      await fn();
    } finally {
      this.batchDepth--;
      this.flush();
    }
  }

  /**
   * Changes from now until the event loop's next turn are told together: the files whose reads
   * finish in one turn of a flood cost one desired-set difference, not one each (2,000 of them,
   * each over every file, were most of the agent's work as a flood was accepted).
   */
  holdForTurn(): void {
    if (this.heldForTurn || this.closed) return;
    this.heldForTurn = true;
    setImmediate(() => {
      this.heldForTurn = false;
      this.flush();
    });
  }

  /** The file holds this good pod now. */
  accept(file: string, pod: StaticPod, warnings: readonly string[]): void {
    for (const w of warnings) {
      this.log.warn('Static pod manifest warning', { file, warning: w });
      this.events.warning({ file, message: w });
    }
    this.refused.delete(file);
    this.refusals.settled(file);
    this.desired.putFile(this.identityFor(file, pod));
    this.loaded.add(file);
    this.flushSoon();
  }

  /** The file is refused for its content or for not being readable; its last good pod (if any) stays. */
  refuse(e: ManifestError): void {
    this.refused.set(e.file, e);
    this.reportError(e);
    this.publishClaims();
  }

  /** The file is gone, or is no longer a manifest. */
  forget(file: string): void {
    this.aliases.delete(file);
    this.refusals.settled(file);
    if (this.refused.delete(file)) this.publishClaims();
    if (!this.desired.podOfFile(file)) return;
    this.desired.dropFile(file);
    this.flushSoon();
  }

  /** See FileSource.adoptIdentity. */
  adoptIdentity(file: string, computedUid: string, runtimeUid: string): boolean {
    const pod = this.desired.podOfFile(file);
    if (this.closed || !pod || pod.computedUid !== undefined || pod.uid !== computedUid || this.desired.isLosing(file))
      return false;
    if (!POD_UID.test(runtimeUid) || runtimeUid === computedUid) return false;
    if (this.desired.hasUid(runtimeUid)) return false;
    this.aliases.set(file, { computedUid, runtimeUid });
    this.desired.putFile(withAdoptedUid(pod, runtimeUid));
    this.log.v(2).info('Static pod takes the UID of the running pod a kubelet started from the same manifest', {
      pod: pod.key,
      uid: runtimeUid,
      computedUID: computedUid,
      file,
    });
    this.flush(true);
    return true;
  }

  /** Nothing is told downstream from now on. */
  close(): void {
    this.closed = true;
  }

  /** The pod as loaded, or under its adopted UID if the alias was made for exactly this content. */
  private identityFor(file: string, pod: StaticPod): StaticPod {
    const alias = this.aliases.get(file);
    if (!alias) return pod;
    if (alias.computedUid === pod.uid) return withAdoptedUid(pod, alias.runtimeUid);
    this.aliases.delete(file);
    this.log.info('Static pod manifest changed: the pod no longer takes the UID of the pod it was adopted from', {
      file,
      uid: pod.uid,
      adoptedUID: alias.runtimeUid,
    });
    return pod;
  }

  /**
   * Computes the desired-set difference, logs it and hands it downstream. `now`: even in the middle
   * of a scan (the files read so far are a valid desired set, only an earlier one).
   */
  private flush(now = false): void {
    if ((this.batchDepth > 0 && !now) || this.closed) return;
    const { desired, log, loaded } = this;
    const change = desired.reconcile();
    for (const e of change.errors) this.reportError(e);
    for (const file of [...loaded].sort()) {
      const pod = desired.podOfFile(file);
      if (pod && !desired.isLosing(file))
        log.info('Static pod manifest accepted', { pod: pod.key, uid: pod.uid, file });
    }
    for (const u of change.updates) {
      if (u.op === 'REMOVE') this.outbox.push({ update: u, line: 'removed' });
      // A file's pod that takes over a key because its rival went away is accepted now.
      else if (!loaded.has(u.pod.file) && !(u.op === 'UPDATE' && u.pod.computedUid === u.previous.uid))
        this.outbox.push({ update: u, line: 'accepted' });
      else this.outbox.push({ update: u });
    }
    loaded.clear();
    // `now` (an adoption) must be told before the caller returns, so everything before it is too.
    if (now || !this.tellScheduled) this.tell(now);
    this.publishClaims();
  }

  /** Tells the waiting changes in order, TELL_PER_TURN of them per turn unless `all`. */
  private tell(all: boolean): void {
    const { log } = this;
    let told = 0;
    while (this.outboxHead < this.outbox.length && !this.closed) {
      if (!all && told === TELL_PER_TURN) {
        if (!this.tellScheduled) {
          this.tellScheduled = true;
          setImmediate(() => {
            this.tellScheduled = false;
            this.tell(false);
          });
        }
        return;
      }
      const { update: u, line } = this.outbox[this.outboxHead++]!;
      told++;
      if (line === 'removed')
        log.info('Static pod removed from desired set', { pod: u.pod.key, uid: u.pod.uid, file: u.pod.file });
      else if (line === 'accepted')
        log.info('Static pod manifest accepted', { pod: u.pod.key, uid: u.pod.uid, file: u.pod.file });
      this.events.update(u);
    }
    this.outbox = [];
    this.outboxHead = 0;
  }

  /** Now, or at the end of the turn being held (a scan's end tells everything anyway). */
  private flushSoon(): void {
    if (!this.heldForTurn) this.flush();
  }

  /** Tells downstream which refused files declare which pods, when that changed. */
  private publishClaims(): void {
    if (this.batchDepth > 0 || this.closed) return;
    const byFile = new Map<string, ManifestClaim>();
    for (const e of this.refused.values()) byFile.set(e.file, claimOf(e));
    for (const e of this.desired.losingErrors()) if (!byFile.has(e.file)) byFile.set(e.file, claimOf(e));
    const claims = [...byFile.values()].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
    const text = JSON.stringify(claims);
    if (text === this.toldClaims) return;
    this.toldClaims = text;
    this.events.refusedClaims?.(claims);
  }

  private reportError(e: ManifestError): void {
    if (this.closed) return;
    this.refusals.refused(e);
    this.events.error(e);
  }
}

// The import directions of ../shared/design.md, as data, and the check of a set of imports against
// them. DEVELOPERS.md ("Import directions") says the same in words; change both together.

/** A part of src/: its top folder (`podworkers`), or a file at src/'s top (`main.ts`). */
export type Part = string;

export interface ImportException {
  /** The importing file and the imported one, relative to src/. */
  readonly from: string;
  readonly to: string;
  readonly why: string;
}

export interface ImportRules {
  /** Wiring: may import every part. */
  readonly wiring: readonly Part[];
  /**
   * The parts in the design's order, earliest first: a part imports only parts of later groups.
   * Parts of one group stand side by side and import neither each other.
   */
  readonly order: readonly (readonly Part[])[];
  /** Leaves: every part may import them; they import only other leaves. */
  readonly leaves: readonly Part[];
  /** Leaves that import nothing of bootlet's at all. */
  readonly sealed: readonly Part[];
  /** Imports that break the order today, each with the reason it stands. */
  readonly exceptions: readonly ImportException[];
}

/** One import of one file: both relative to src/, the target as a .ts path. */
export interface SourceImport {
  readonly from: string;
  readonly to: string;
}

export interface Violation extends SourceImport {
  readonly message: string;
}

const staticPodType = 'the static pod type of config; to move to the one pod type of src/k8s (issue 16 parts 1 and 2)';

export const RULES: ImportRules = {
  wiring: ['main.ts', 'cli', 'server'],
  order: [
    // Report the node outward (Prometheus, systemd) and act on the node's shutdown (logind): they
    // read the parts below through views the wiring hands them.
    ['metrics', 'systemd', 'nodeshutdown'],
    ['apiserver'],
    ['status'],
    // The sources feed the workers; the prober reports to them.
    // Admission judges the desired set's new pods before a worker gets them (the kubelet's canAdmitPod).
    ['admission'],
    ['config', 'prober'],
    ['podworkers'],
    // The pod cache and its relists: read by workers and status, reading the runtime.
    ['pleg'],
    ['kuberuntime'],
    ['node', 'cm'],
    ['cri'],
  ],
  // informer: the one list+watch loop (client-go's reflector), fed to config's API pod source and to apiserver.
  // dbus: the one D-Bus connection, spoken by cm (systemd's cgroup driver) and nodeshutdown (logind).
  leaves: ['k8s', 'util', 'log', 'process', 'version.ts', 'dbus', 'informer'],
  sealed: ['k8s'],
  exceptions: [
    {
      from: 'podworkers/pod-workers.ts',
      to: 'config/types.ts',
      why: `type-only: the desired set's updates and lookup (PodUpdate, DesiredPodLookup, StaticPod), the message the set sends its subscribers; ${staticPodType}`,
    },
  ],
};

/** The part a file of src/ belongs to. */
export function partOf(file: string): Part {
  const slash = file.indexOf('/');
  return slash === -1 ? file : file.slice(0, slash);
}

function rank(rules: ImportRules, part: Part): number {
  return rules.order.findIndex((group) => group.includes(part));
}

/** Why `from` may not import `to`, or undefined when it may. */
function refusal(rules: ImportRules, from: Part, to: Part): string | undefined {
  if (from === to) return undefined;
  const known = (p: Part): boolean => rules.wiring.includes(p) || rules.leaves.includes(p) || rank(rules, p) !== -1;
  for (const p of [from, to])
    if (!known(p))
      return `${p} has no place in the import rules: add it to test/unit/architecture/import-rules.ts and DEVELOPERS.md`;
  if (rules.sealed.includes(from)) return `${from} imports nothing of bootlet's`;
  if (rules.wiring.includes(from)) return undefined;
  if (rules.leaves.includes(to)) return undefined;
  if (rules.leaves.includes(from))
    return `${from} is a leaf: it imports only other leaves (${rules.leaves.join(', ')})`;
  if (rules.wiring.includes(to)) return `${to} is wiring: only wiring imports it`;
  const a = rank(rules, from);
  const b = rank(rules, to);
  if (a === b) return `${from} and ${to} stand side by side in design.md's order and import neither each other`;
  if (a > b) return `${from} comes after ${to} in design.md's order (a later part never imports an earlier one)`;
  return undefined;
}

/** The imports that break the rules (less the named exceptions), and the exceptions nothing uses any more. */
export function checkImports(
  imports: readonly SourceImport[],
  rules: ImportRules = RULES,
): { violations: Violation[]; unusedExceptions: ImportException[] } {
  const used = new Set<ImportException>();
  const violations: Violation[] = [];
  for (const i of imports) {
    if (i.to.startsWith('../')) {
      violations.push({ ...i, message: `${i.from} imports ${i.to}, outside src/` });
      continue;
    }
    const why = refusal(rules, partOf(i.from), partOf(i.to));
    if (why === undefined) continue;
    const exception = rules.exceptions.find((e) => e.from === i.from && e.to === i.to);
    if (exception) used.add(exception);
    else violations.push({ ...i, message: `${i.from} imports ${i.to}: ${why}` });
  }
  return { violations, unusedExceptions: rules.exceptions.filter((e) => !used.has(e)) };
}

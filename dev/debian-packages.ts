// Debian packages of other suites (containerd 1.7 from trixie, containerd 2.x and kubectl from sid,
// crun), fetched with apt into a private directory and unpacked with `dpkg-deb -x`. Nothing is
// installed: the machine's apt sources, state and dpkg database are never touched. The mirror is
// the one the machine's own apt sources name for Debian, so no other registry is needed.
//
// `npx tsx dev/debian-packages.ts <suite> <package>...` fetches from the command line and prints
// where each package was unpacked.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import { run } from './exec.js';

export type DebianSuite = 'bookworm' | 'trixie' | 'sid';

export interface UnpackedPackage {
  name: string;
  version: string;
  suite: DebianSuite;
  /** The package's files, unpacked as they would be under / (`<root>/usr/bin/containerd`). */
  root: string;
  /** The downloaded .deb itself (what `dpkg -i` installs in the test node's guest). */
  deb: string;
}

const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
/** A suite's package lists are read again after this long (sid moves daily). */
const LISTS_MAX_AGE_MS = 24 * 3600 * 1000;

/** Shared by every checkout of the machine (worktrees too); `BOOTLET_DEBIAN_CACHE` moves it. */
export function debianCacheDir(): string {
  return process.env.BOOTLET_DEBIAN_CACHE ?? path.join(homedir(), '.cache', 'bootlet', 'debian-packages');
}

/**
 * The Debian mirror the machine's apt sources use for its main suite: the URIs of a source whose
 * suites include a Debian release and that is not the security archive.
 */
export function machineDebianMirror(sourcesDir = '/etc/apt'): string {
  const found: string[] = [];
  const files: string[] = [];
  if (existsSync(path.join(sourcesDir, 'sources.list'))) files.push(path.join(sourcesDir, 'sources.list'));
  const partsDir = path.join(sourcesDir, 'sources.list.d');
  if (existsSync(partsDir)) {
    for (const f of readdirSync(partsDir).sort()) {
      if (f.endsWith('.sources') || f.endsWith('.list')) files.push(path.join(partsDir, f));
    }
  }
  for (const file of files) found.push(...mirrorsIn(readFileSync(file, 'utf8'), file.endsWith('.sources')));
  const mirror = found.find((uri) => !/security/.test(uri));
  if (!mirror) throw new Error(`no Debian mirror found in the apt sources under ${sourcesDir}`);
  return mirror.replace(/\/+$/, '');
}

const RELEASES = /^(bookworm|trixie|forky|sid|unstable|testing|stable)(-updates)?$/;

function mirrorsIn(text: string, deb822: boolean): string[] {
  const out: string[] = [];
  if (deb822) {
    for (const stanza of text.split(/\n\s*\n/)) {
      const field = (name: string): string[] => {
        const m = new RegExp(`^${name}:\\s*(.*)$`, 'mi').exec(stanza);
        return m ? m[1].trim().split(/\s+/) : [];
      };
      if (!field('Types').includes('deb')) continue;
      if (!field('Suites').some((s) => RELEASES.test(s))) continue;
      out.push(...field('URIs'));
    }
  } else {
    for (const raw of text.split('\n')) {
      const line = raw.replace(/#.*/, '').trim();
      const m = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)/.exec(line);
      if (m && RELEASES.test(m[2])) out.push(m[1]);
    }
  }
  return out.filter((uri) => /^https?:\/\//.test(uri));
}

function suiteDir(suite: DebianSuite): string {
  return path.join(debianCacheDir(), suite);
}

/** apt-get with a sources list, state and cache of the suite's own directory. */
function aptArgs(suite: DebianSuite): string[] {
  const dir = suiteDir(suite);
  return [
    '-o',
    `Dir::Etc::SourceList=${path.join(dir, 'sources.list')}`,
    '-o',
    `Dir::Etc::SourceParts=${path.join(dir, 'sources.list.d')}`,
    '-o',
    `Dir::Etc::Preferences=${path.join(dir, 'preferences')}`,
    '-o',
    `Dir::Etc::PreferencesParts=${path.join(dir, 'preferences.d')}`,
    '-o',
    `Dir::State=${path.join(dir, 'state')}`,
    '-o',
    `Dir::State::status=${path.join(dir, 'state', 'status')}`,
    '-o',
    `Dir::Cache=${path.join(dir, 'cache')}`,
    '-o',
    'APT::Architecture=amd64',
    '-o',
    'Acquire::Languages=none',
    '-o',
    'Debug::NoLocking=1',
    '-q',
  ];
}

function prepareSuite(suite: DebianSuite): void {
  const dir = suiteDir(suite);
  for (const sub of ['sources.list.d', 'preferences.d', 'state/lists/partial', 'cache/archives/partial', 'debs']) {
    mkdirSync(path.join(dir, sub), { recursive: true });
  }
  const mirror = machineDebianMirror();
  writeFileSync(path.join(dir, 'sources.list'), `deb [signed-by=${KEYRING}] ${mirror} ${suite} main\n`);
  if (!existsSync(path.join(dir, 'state', 'status'))) writeFileSync(path.join(dir, 'state', 'status'), '');
}

/** Holds the suite's lock (flock(1)) while `args` runs: two checkouts may fetch at once. */
function locked(suite: DebianSuite, cmd: string, args: string[], timeoutMs: number): Promise<string> {
  return run('flock', ['-w', '600', path.join(suiteDir(suite), '.lock'), cmd, ...args], { timeoutMs });
}

async function updateLists(suite: DebianSuite): Promise<void> {
  const stamp = path.join(suiteDir(suite), 'state', 'updated');
  if (existsSync(stamp) && Date.now() - statSync(stamp).mtimeMs < LISTS_MAX_AGE_MS) return;
  await locked(suite, 'apt-get', [...aptArgs(suite), 'update'], 600_000);
  writeFileSync(stamp, new Date().toISOString());
}

/** The suite's candidate version of a package. */
async function candidateVersion(suite: DebianSuite, name: string): Promise<string> {
  const out = await run('apt-cache', [...aptArgs(suite), 'policy', name]);
  const m = /Candidate:\s*(\S+)/.exec(out);
  if (!m || m[1] === '(none)') throw new Error(`Debian ${suite} has no package ${name}`);
  return m[1];
}

/**
 * The suite's current version of each package, downloaded once (cached by name and version) and
 * unpacked into a directory of its own. No dependency is resolved: name every package needed.
 */
export async function fetchDebianPackages(suite: DebianSuite, names: string[]): Promise<UnpackedPackage[]> {
  prepareSuite(suite);
  await updateLists(suite);
  const out: UnpackedPackage[] = [];
  for (const name of names) out.push(await fetchOne(suite, name));
  return out;
}

/**
 * A package of the suite already unpacked in the cache whose version starts with `versionPrefix`
 * (the newest such), without asking apt: a suite that moved on keeps serving what a test was made for.
 */
export function cachedDebianPackage(
  suite: DebianSuite,
  name: string,
  versionPrefix: string,
): UnpackedPackage | undefined {
  const unpacked = path.join(suiteDir(suite), 'unpacked');
  let entries: string[] = [];
  try {
    entries = readdirSync(unpacked);
  } catch {
    return undefined;
  }
  const found: UnpackedPackage[] = [];
  for (const e of entries) {
    const root = path.join(unpacked, e);
    let stamp: string;
    try {
      stamp = readFileSync(path.join(root, '.complete'), 'utf8');
    } catch {
      continue;
    }
    const [pkg, version, from] = stamp.trim().split(' ');
    if (pkg !== name || from !== suite || !version?.startsWith(versionPrefix)) continue;
    // Only while its .deb is still there (the test node's guest installs the file itself).
    const debs = path.join(suiteDir(suite), 'debs');
    const deb = existsSync(debs)
      ? readdirSync(debs).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb') && f.includes(debVersion(version)))
      : undefined;
    if (deb) found.push({ name, version, suite, root, deb: path.join(debs, deb) });
  }
  found.sort((a, b) => a.version.localeCompare(b.version, 'en', { numeric: true }));
  return found.at(-1);
}

async function fetchOne(suite: DebianSuite, name: string): Promise<UnpackedPackage> {
  const version = await candidateVersion(suite, name);
  const safe = `${name}_${version.replace(/[^0-9A-Za-z.+~-]/g, '_')}`;
  const root = path.join(suiteDir(suite), 'unpacked', safe);
  const debs = path.join(suiteDir(suite), 'debs');
  const deb = readdirSync(debs).find(
    (f) => f.startsWith(`${name}_`) && f.endsWith('.deb') && f.includes(debVersion(version)),
  );
  const debPath = deb ? path.join(debs, deb) : await download(suite, name, version, debs);
  if (existsSync(path.join(root, '.complete'))) return { name, version, suite, root, deb: debPath };
  const partial = `${root}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  await run('dpkg-deb', ['-x', debPath, partial], { timeoutMs: 300_000 });
  writeFileSync(path.join(partial, '.complete'), `${name} ${version} ${suite}\n`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(path.dirname(root), { recursive: true });
  renameSync(partial, root);
  return { name, version, suite, root, deb: debPath };
}

/** A .deb file name writes the version with its epoch's colon escaped as %3a. */
function debVersion(version: string): string {
  return version.replace(/:/g, '%3a');
}

async function download(suite: DebianSuite, name: string, version: string, into: string): Promise<string> {
  await locked(
    suite,
    'sh',
    ['-c', `cd "$1" && shift && exec "$@"`, 'sh', into, 'apt-get', ...aptArgs(suite), 'download', `${name}=${version}`],
    900_000,
  );
  const deb = readdirSync(into).find(
    (f) => f.startsWith(`${name}_`) && f.endsWith('.deb') && f.includes(debVersion(version)),
  );
  if (!deb) throw new Error(`apt-get download ${name}=${version} (Debian ${suite}) left no .deb in ${into}`);
  return path.join(into, deb);
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const [suite, ...names] = process.argv.slice(2);
  if (!suite || names.length === 0) {
    console.error('usage: tsx dev/debian-packages.ts <bookworm|trixie|sid> <package>...');
    process.exit(2);
  }
  for (const p of await fetchDebianPackages(suite as DebianSuite, names))
    console.log(`${p.name} ${p.version} (${p.suite}): ${p.root}`);
}

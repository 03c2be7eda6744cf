// A cgroup's name as the kubelet keeps it (a list of components, e.g. kubepods / burstable /
// pod<uid>) and its two spellings on the host: cgroupfs (/kubepods/burstable/pod<uid>) and systemd
// (/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with - as _>.slice).

export type CgroupName = readonly string[];

export type CgroupDriver = 'cgroupfs' | 'systemd';

export const ROOT_CGROUP: CgroupName = [];

/** What the kubelet refuses in a component: "/" splits paths, "_" is systemd's escape for "-". */
const COMPONENT = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;

export class CgroupNameError extends Error {
  override name = 'CgroupNameError';
}

export function cgroupName(base: CgroupName, ...components: string[]): CgroupName {
  for (const c of components) {
    if (!COMPONENT.test(c) || c.length > 200)
      throw new CgroupNameError(`invalid cgroup name component ${JSON.stringify(c)}`);
  }
  return [...base, ...components];
}

export function toCgroupfs(name: CgroupName): string {
  return '/' + name.join('/');
}

/** `kubepods-burstable-pod1_2.slice`: the unit name systemd knows the cgroup by. */
export function systemdUnitName(name: CgroupName): string {
  if (name.length === 0) return '-.slice';
  return name.map((c) => c.replaceAll('-', '_')).join('-') + '.slice';
}

/** The slice's place in the hierarchy, as systemd nests slices by the dashes in their names. */
export function toSystemd(name: CgroupName): string {
  if (name.length === 0) return '/';
  const parts = systemdUnitName(name).slice(0, -'.slice'.length).split('-');
  let out = '';
  let prefix = '';
  for (const p of parts) {
    out += `/${prefix}${p}.slice`;
    prefix += `${p}-`;
  }
  return out;
}

/** The cgroupfs-form path of a cgroup under the given driver (the kubelet's CgroupManager.Name). */
export function literalName(driver: CgroupDriver, name: CgroupName): string {
  return driver === 'systemd' ? toSystemd(name) : toCgroupfs(name);
}

/** `--cgroup-root`, always written in cgroupfs form: "/" or "/a/b". */
export function parseCgroupRoot(root: string): CgroupName {
  if (!root.startsWith('/'))
    throw new CgroupNameError(`cgroupRoot ${JSON.stringify(root)}: must be an absolute path such as "/"`);
  const parts = root.split('/').filter((p) => p !== '');
  return cgroupName(ROOT_CGROUP, ...parts);
}

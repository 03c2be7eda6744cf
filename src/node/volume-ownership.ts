// The kubelet's SetVolumeOwnership for a pod's fsGroup: every file and directory of the volume
// gets the group, group read (and write, for a writable volume), directories also group search
// and setgid so new files inherit the group. Links are lchowned and never followed.
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

const RW_MASK = 0o660;
const RO_MASK = 0o440;
const EXEC_MASK = 0o110;
const SETGID = 0o2000;

async function changeOne(p: string, fsGroup: number, readOnly: boolean): Promise<boolean> {
  const st = await lstat(p);
  await lchown(p, -1, fsGroup);
  if (st.isSymbolicLink()) return false;
  let mask = readOnly ? RO_MASK : RW_MASK;
  if (st.isDirectory()) mask |= SETGID | EXEC_MASK;
  const mode = (st.mode & 0o7777) | mask;
  if (mode !== (st.mode & 0o7777)) await chmod(p, mode);
  return st.isDirectory();
}

export async function setVolumeOwnership(dir: string, fsGroup: number | undefined, readOnly: boolean): Promise<void> {
  if (fsGroup === undefined) return;
  const visit = async (p: string): Promise<void> => {
    if (!(await changeOne(p, fsGroup, readOnly))) return;
    for (const name of await readdir(p)) await visit(path.join(p, name));
  };
  await visit(dir);
}

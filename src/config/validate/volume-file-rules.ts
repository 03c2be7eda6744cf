// The files a configMap, secret, downwardAPI or projected volume writes, as the API server checks
// them (validateKeyToPath, validateDownwardAPIVolumeFile, the file modes): paths stay inside the
// volume and do not start with `..` (the atomic writer's), modes are 0 to 0777.
import type { DownwardAPIVolumeFile, KeyToPath } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { VOLUME_FIELD_PATHS, validateFieldRef, validateResourceFieldRef } from './downward-api-rules';
import { invalid, required } from './field-errors';
import { localNonReservedPath } from './path-rules';

const FILE_MODE_MESSAGE = 'must be a number between 0 and 0777 (octal), both inclusive';

export function fileMode(mode: number | undefined, p: readonly PathPart[], out: string[]): void {
  if (mode !== undefined && (mode < 0 || mode > 0o777)) out.push(invalid(p, mode, FILE_MODE_MESSAGE));
}

/** validateKeyToPath: a configMap's or secret's item. */
export function keyToPath(kp: KeyToPath, p: readonly PathPart[], out: string[]): void {
  if (!kp.key) out.push(required([...p, 'key']));
  if (!kp.path) out.push(required([...p, 'path']));
  localNonReservedPath([...p, 'path'], kp.path ?? '', out);
  fileMode(kp.mode, [...p, 'mode'], out);
}

/** validateDownwardAPIVolumeFile; `p` is the source's path (the API server does not name the item). */
export function downwardAPIFile(file: DownwardAPIVolumeFile, p: readonly PathPart[], out: string[]): void {
  if (!file.path) out.push(required([...p, 'path']));
  localNonReservedPath([...p, 'path'], file.path ?? '', out);
  if (file.fieldRef) {
    validateFieldRef(file.fieldRef, VOLUME_FIELD_PATHS, [...p, 'fieldRef'], out);
    if (file.resourceFieldRef)
      out.push(invalid(p, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  } else if (file.resourceFieldRef)
    validateResourceFieldRef(file.resourceFieldRef, [...p, 'resourceFieldRef'], true, out);
  else out.push(required(p, 'one of fieldRef and resourceFieldRef is required'));
  fileMode(file.mode, [...p, 'mode'], out);
}

// metadata.labels and metadata.annotations as the API server checks them on create
// (ValidateLabels, ValidateAnnotations): every key a qualified name (annotation keys in any case),
// every label value a label value, annotations at most 256 KiB in all.
import type { PathPart } from '../field-path';
import { isQualifiedName, isValidLabelValue } from './api-formats';
import { invalid, tooLong } from './field-errors';

/** apimachinery's TotalAnnotationSizeLimitB: keys and values together, in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;

export function validateLabels(
  labels: Readonly<Record<string, string>> | undefined,
  path: readonly PathPart[],
): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) out.push(invalid(path, k, m));
    // A null value (`key:` in YAML) decodes as "": a valid, empty label.
    const value = typeof v === 'string' ? v : '';
    for (const m of isValidLabelValue(value)) out.push(invalid(path, value, m));
  }
  return out;
}

export function validateAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  path: readonly PathPart[],
): string[] {
  const out: string[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) out.push(invalid(path, k, m));
    total += Buffer.byteLength(k, 'utf8') + Buffer.byteLength(typeof v === 'string' ? v : '', 'utf8');
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) out.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return out;
}

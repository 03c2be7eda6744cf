// Reads a KubeletConfiguration file (kubelet.config.k8s.io/v1beta1) the way the kubelet decodes it:
// YAML 1.1 as sigs.k8s.io/yaml reads it, Go's JSON types (a number is not a string), a zero value in
// a non-pointer field meaning "use the default" (kubeadm writes `0s` and `""` for most fields),
// relative paths taken from the file's directory, and unknown fields named in a warning (the
// kubelet falls back to lenient decoding for v1beta1 and logs them).
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isMap, isScalar, LineCounter, parseDocument, type Document, type Node, type YAMLMap } from 'yaml';
import type { AnySetting } from './settings/setting.js';
import { CONFIG_STRUCTS, SETTING_BY_FIELD } from './settings/table.js';
import { errorMessage } from '../util/error-message.js';

export const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

export interface ConfigValue {
  readonly value: unknown;
  /** 1-based line of the field in the file. */
  readonly line: number;
}

export interface LoadedKubeletConfig {
  readonly file: string;
  /** The fields the file gives a value; zero values of non-pointer fields are left out (defaulted). */
  readonly values: ReadonlyMap<AnySetting, ConfigValue>;
  /** Fields that are not in KubeletConfiguration v1beta1 (typos, or newer kubelets' fields). */
  readonly unknownFields: string[];
  /** Fields given twice; the last one counts, as in the kubelet's lenient decoding. */
  readonly duplicateFields: string[];
}

function parse(content: string): { doc: Document.Parsed; lines: LineCounter } {
  const lines = new LineCounter();
  // YAML 1.1 as the kubelet's YAML library reads it (`yes` and `on` are true), without timestamps:
  // they stay strings there.
  const doc = parseDocument(content, {
    version: '1.1',
    // Duplicates are found below and warned about: the kubelet's lenient decoding keeps the last.
    uniqueKeys: false,
    lineCounter: lines,
    prettyErrors: false,
    customTags: (tags) => tags.filter((t) => typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:timestamp'),
  });
  return { doc, lines };
}

export function parseKubeletConfig(file: string, content: string): LoadedKubeletConfig {
  const { doc, lines } = parse(content);
  const duplicateFields: string[] = [];
  const firstError = doc.errors[0];
  if (firstError) {
    const line = lines.linePos(firstError.pos[0]).line;
    throw new ConfigFileError(`${file}:${line}: ${firstError.message.split('\n')[0]}`);
  }
  const root = doc.contents;
  if (!isMap(root)) throw new ConfigFileError(`${file}: not a KubeletConfiguration object`);
  const top = root.toJS(doc) as Record<string, unknown>;
  if (top.kind !== 'KubeletConfiguration')
    throw new ConfigFileError(`${file}: kind is ${JSON.stringify(top.kind ?? null)}, want "KubeletConfiguration"`);
  if (top.apiVersion !== KUBELET_CONFIG_API_VERSION) {
    throw new ConfigFileError(
      `${file}: apiVersion is ${JSON.stringify(top.apiVersion ?? null)}, want ${JSON.stringify(KUBELET_CONFIG_API_VERSION)} (the only version of KubeletConfiguration)`,
    );
  }

  const values = new Map<AnySetting, ConfigValue>();
  const unknownFields: string[] = [];
  const lineOf = (n: Node | null | undefined): number => (n?.range ? lines.linePos(n.range[0]).line : 0);
  const seen = new Set<string>();

  const walk = (map: YAMLMap, prefix: string): void => {
    for (const pair of map.items) {
      const keyNode = pair.key as Node | null;
      const key = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const path = prefix === '' ? key : `${prefix}.${key}`;
      const valueNode = pair.value as Node | null;
      const line = lineOf(keyNode);
      if (seen.has(path)) duplicateFields.push(`${path} (line ${line})`);
      seen.add(path);
      if (prefix === '' && (key === 'apiVersion' || key === 'kind')) continue;
      const s = SETTING_BY_FIELD.get(path);
      const raw: unknown = valueNode === null ? null : valueNode.toJS(doc);
      if (!s) {
        if (!CONFIG_STRUCTS.has(path)) unknownFields.push(path);
        else if (isMap(valueNode)) walk(valueNode, path);
        else if (raw !== null) throw new ConfigFileError(`${file}:${line}: ${path}: must be an object`);
        continue;
      }
      if (raw === null || raw === undefined) {
        values.delete(s);
        continue;
      }
      let value: unknown;
      try {
        value = s.type.fromConfig(raw);
      } catch (err) {
        throw new ConfigFileError(`${file}:${line}: ${path}: ${errorMessage(err)}`);
      }
      if (!s.pointer && s.type.isZero(value)) {
        values.delete(s);
        continue;
      }
      if (s.configRelative && typeof value === 'string' && value !== '' && !isAbsolute(value))
        value = resolve(dirname(resolve(file)), value);
      values.set(s, { value, line });
    }
  };
  walk(root, '');
  return { file, values, unknownFields, duplicateFields };
}

export function loadKubeletConfig(file: string): LoadedKubeletConfig {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigFileError(
      `cannot read config file ${file}: ${code === 'ENOENT' ? 'no such file' : errorMessage(err)}`,
    );
  }
  return parseKubeletConfig(file, content);
}

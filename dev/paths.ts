// Where the dev harness keeps its files: everything under the repository's .tmp/ (git-ignored).
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TMP_BASE = path.join(REPO_ROOT, '.tmp');
export const IMAGE_CACHE = path.join(TMP_BASE, 'images');

// Prints the README's settings section from the settings table (src/cli/settings/); with --write it
// replaces the section between the markers in README.md, with --check it fails when they differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { settingsMarkdown, DOC_BEGIN, DOC_END } = await tsImport('../src/cli/settings/doc.ts', import.meta.url);
const section = settingsMarkdown();
const mode = process.argv[2];
if (mode !== '--write' && mode !== '--check') {
  process.stdout.write(section + '\n');
  process.exit(0);
}
const readmePath = join(root, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const begin = readme.indexOf(DOC_BEGIN);
const end = readme.indexOf(DOC_END);
if (begin < 0 || end < begin) {
  console.error(
    `README.md has no settings section: add the two lines\n${DOC_BEGIN}\n${DOC_END}\nwhere it goes, then run this with --write`,
  );
  process.exit(1);
}
const current = readme.slice(begin, end + DOC_END.length);
if (mode === '--check') {
  if (current !== section) {
    console.error('README.md settings section is out of date: node build/gen-settings-doc.mjs --write');
    process.exit(1);
  }
  process.exit(0);
}
writeFileSync(readmePath, readme.slice(0, begin) + section + readme.slice(end + DOC_END.length));
console.log('README.md settings section written');

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOC_BEGIN, DOC_END, settingsMarkdown } from '../../../src/cli/settings/doc.js';
import { ALL_SETTINGS } from '../../../src/cli/settings/table.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

describe('the README settings section', () => {
  it('names every setting of the table, with its status', () => {
    const doc = settingsMarkdown();
    for (const s of ALL_SETTINGS) expect(doc, s.flag ?? s.field).toContain(`\`${s.field ?? `--${s.flag}`}\``);
  });

  it('is the one generated from the table (node build/gen-settings-doc.mjs --write)', () => {
    // The README carries the section: a README without its markers is an error, not a skip.
    expect(readme).toContain(DOC_BEGIN);
    expect(readme).toContain(DOC_END);
    expect(readme.slice(readme.indexOf(DOC_BEGIN), readme.indexOf(DOC_END) + DOC_END.length)).toBe(settingsMarkdown());
  });
});

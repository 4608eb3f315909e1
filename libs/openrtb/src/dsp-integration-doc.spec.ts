import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOSS_CODE_BY_REASON, LOSS_CODE_DESCRIPTIONS } from './loss-reason';
import { AUCTION_MACROS } from './macro.substitution';

/** The DSP integration page: its macro and loss code tables are derived from the code's. */
const DOC = readFileSync(path.resolve(__dirname, '../../../docs/dsp-integration.md'), 'utf8');

/** The cells of the table rows of the page, trimmed. */
const rows = DOC.split('\n')
  .filter((line) => line.startsWith('|') && !/^\|[\s-|]+$/.test(line))
  .map((line) =>
    line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );

describe('docs/dsp-integration.md', () => {
  it('lists every macro, in the order of AUCTION_MACROS, with its description', () => {
    const macroRows = rows.filter(([first]) => /^`\$\{AUCTION_[A-Z_]+\}`$/.test(first));
    expect(macroRows).toEqual(
      Object.entries(AUCTION_MACROS).map(([name, { description }]) => [`\`\${${name}}\``, description]),
    );
  });

  it('lists every loss code with its meaning, and every reason under its code', () => {
    const codeRows = rows.filter(([first, second]) => /^\d+$/.test(first) && !second.startsWith('`'));
    expect(codeRows).toEqual(Object.entries(LOSS_CODE_DESCRIPTIONS).map(([code, text]) => [code, text]));
    const reasonRows = rows.filter(([first, second]) => /^\d+$/.test(first) && second.startsWith('`'));
    const documented = reasonRows.flatMap(([code, reasons]) =>
      reasons.split(', ').map((r) => [r.replace(/`/g, ''), Number(code)] as const),
    );
    expect(Object.fromEntries(documented)).toEqual(LOSS_CODE_BY_REASON);
  });
});

import { describe, expect, it } from 'vitest';
import { escapeUnsafe, unsafeNameProblem } from '../../src/http/names.js';
// The console's own copy of the rule (it is built apart from the gateway).
import { shown } from '../../src/console/text.js';

// The console writes the characters the gateway refuses in names as \uXXXX, exactly as the CLI
// does: the same list, character for character.

describe("the console's escaping of names", () => {
  it('escapes exactly the characters names may not hold, as the CLI does', () => {
    const differ: string[] = [];
    for (let cp = 0; cp <= 0xffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (shown(c) !== escapeUnsafe(c) || (shown(c) !== c) !== (unsafeNameProblem(c) !== null)) differ.push(cp.toString(16));
    }
    expect(differ).toEqual([]);
  });

  it('leaves other text as it is', () => {
    expect(shown('Zoë’s app 视频 🎬')).toBe('Zoë’s app 视频 🎬');
    expect(shown('a\u202Eb\u001b[2J')).toBe('a\\u202eb\\u001b[2J');
    expect(shown(null)).toBe('');
  });
});

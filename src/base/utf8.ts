// Stack files are UTF-8. A byte that is not UTF-8 is an error at its line and column, never a
// silent U+FFFD that the rest of loading would accept as part of a name or a member.

export interface InvalidUtf8 {
  /** Offset of the first byte of the ill-formed sequence */
  offset: number;
  /** That byte */
  byte: number;
  /** 1-based; the column counts characters (code points) of the (valid) text before it, as
   *  editors do (see columnAt) */
  line: number;
  column: number;
}

export type Decoded = { ok: true; text: string } | { ok: false; invalid: InvalidUtf8 };

/** Where `text` starts counting columns on the line that starts at `lineStart`: after a byte order
 *  mark at the start of the text, which is not a character an editor shows. */
const columnsFrom = (text: string, lineStart: number) =>
  lineStart === 0 && text.charCodeAt(0) === 0xfeff ? 1 : lineStart;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** The offset after the character (code point) at `i`. */
function nextCharacter(text: string, i: number): number {
  return isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? i + 2 : i + 1;
}

/**
 * The 1-based column of `offset` on the line of `text` that starts at `lineStart`, counted as
 * editors count it: in characters (Unicode code points, so a character outside the BMP is one
 * column, not two UTF-16 units), and without a byte order mark at the start of the text. Every
 * diagnostic's column is one of these, in text output and in validate --json alike.
 */
export function columnAt(text: string, lineStart: number, offset: number): number {
  let column = 1;
  for (let i = columnsFrom(text, lineStart); i < offset; i = nextCharacter(text, i)) column++;
  return column;
}

/**
 * The offset of 1-based `column` (as columnAt counts) on the line [lineStart, lineEnd) of `text`; the line's end when
 * it is shorter.
 */
export function offsetOfColumn(text: string, lineStart: number, lineEnd: number, column: number): number {
  let i = columnsFrom(text, lineStart);
  for (let c = 1; c < column && i < lineEnd; c++) i = nextCharacter(text, i);
  return Math.min(i, lineEnd);
}

const fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The length of the well-formed UTF-8 sequence at `i` (Unicode table 3-7), or 0 when it is not one. */
function sequenceLength(b: Uint8Array, i: number): number {
  const c = b[i]!;
  if (c < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < b.length && b[i + k]! >= lo && b[i + k]! <= hi;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const [lo, hi] = c === 0xe0 ? [0xa0, 0xbf] : c === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const [lo, hi] = c === 0xf0 ? [0x90, 0xbf] : c === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** The offset of the first byte of the first ill-formed sequence in `b`, or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  for (let i = 0; i < b.length;) {
    const n = sequenceLength(b, i);
    if (n === 0) return i;
    i += n;
  }
  return -1;
}

/** Decodes UTF-8 strictly (a leading BOM is kept, as yaml expects it). */
export function decodeUtf8(bytes: Uint8Array): Decoded {
  try {
    return { ok: true, text: fatal.decode(bytes) };
  } catch {
    const offset = firstInvalidUtf8(bytes);
    // The decoder refused the bytes, so there is an ill-formed sequence to find.
    if (offset < 0) throw new Error("TextDecoder refused bytes that are well-formed UTF-8");
    const before = fatal.decode(bytes.subarray(0, offset));
    const lineStart = before.lastIndexOf("\n") + 1;
    let line = 1;
    for (let i = before.indexOf("\n"); i >= 0; i = before.indexOf("\n", i + 1)) line++;
    return {
      ok: false,
      invalid: { offset, byte: bytes[offset]!, line, column: columnAt(before, lineStart, before.length) },
    };
  }
}

// Text made in many small chunks (a plan of 100,000 resources, its canonical form, its file),
// handed on in pieces of about a given size: never the whole text as one string, nor a write or a
// hash update per chunk.

/** The chunks joined into pieces of at least `size` characters (the last one may be shorter;
 *  none is empty); their concatenation is the chunks'. */
export function* textPieces(chunks: Iterable<string>, size: number): Generator<string> {
  let piece = "";
  for (const chunk of chunks) {
    piece += chunk;
    if (piece.length < size) continue;
    yield piece;
    piece = "";
  }
  if (piece) yield piece;
}

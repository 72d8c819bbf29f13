// Did you mean: the name a misspelt one was most likely meant to be.
import { closest, distance } from "fastest-levenshtein";

/** The closest name in `pool`, when it is close enough to be a plausible typo. */
export function suggest(word: string, pool: readonly string[]): string | undefined {
  if (!pool.length) return undefined;
  const guess = closest(word, pool as string[]);
  return distance(word, guess) <= Math.max(2, Math.floor(word.length / 3)) ? guess : undefined;
}

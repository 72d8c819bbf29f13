// Appending many items and taking the largest of many numbers. `into.push(...items)` and
// `Math.max(...values)` pass every item as an argument on the stack, and past about 120,000 of
// them V8 throws RangeError: a destroy plan of 100,000 resources crashed so in its access summary.
// No call in src/ spreads an array into its arguments (test/scripts/spreads.test.ts).

/** Appends the items to `into`, one by one; returns `into`. */
export function pushAll<T>(into: T[], items: Iterable<T>): T[] {
  for (const x of items) into.push(x);
  return into;
}

/** The largest of the values, or `empty` when there is none. */
export function maxOf(values: Iterable<number>, empty = -Infinity): number {
  let max = empty;
  for (const v of values) if (v > max || Number.isNaN(v)) max = v;
  return max;
}

// A seeded pseudo-random number generator for property tests that must replay the same cases
// (a linear congruential generator: numbers in [0, 1), the same sequence for the same seed).
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

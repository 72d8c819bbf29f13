// How messages name a few of many things.

/** "a, b, c" or, past `max`, "a, b and 5 more". */
export function listed(names: readonly string[], max: number): string {
  return names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

/** How many names a diagnostic's detail lists before it counts the rest ("Resources: …"): a stack
 *  of 100,000 resources named them all, a line of megabytes. */
export const NAMES_IN_DETAIL = 20;

// How messages name a few of many things.

/** "a, b, c" or, past `max`, "a, b and 5 more". */
export function listed(names: readonly string[], max: number): string {
  return names.length <= max ? names.join(", ") : `${names.slice(0, max).join(", ")} and ${names.length - max} more`;
}

/** How many names a diagnostic's detail lists before it counts the rest ("Resources: …"): a stack
 *  of 100,000 resources named them all, a line of megabytes. */
export const NAMES_IN_DETAIL = 20;

/** "1 resource", "3 resources", "1 policy", "2 policies": a count with its noun in the right
 *  number (`plural` when adding "s" is not it). */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/** A resource address as a message quotes it: `"viewers"`, but an instance address as it is
 *  (`viewers["sre"]`), not wrapped in quotes of its own (`"viewers["sre"]"` reads as two strings). */
export function addressText(address: string): string {
  return address.includes('"') ? address : `"${address}"`;
}

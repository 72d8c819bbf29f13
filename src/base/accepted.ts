// A pure check of a string, remembering what it accepted: a stack names the same members and
// roles in many resources (a team's group in every policy), and each is then checked once.

/** Accepted strings kept at most: the first ones, which in a stack are the often repeated ones
 *  (a set of 100,000 distinct members cost more to grow and probe than the checks it saved). */
const KEPT = 4_096;

/** `check` (undefined: accepted, else why not), answering from memory for a string it accepted
 *  before. Refusals are not kept: they are rare and their messages are computed each time. */
export function rememberAccepted(check: (value: string) => string | undefined): (value: string) => string | undefined {
  const accepted = new Set<string>();
  return (value) => {
    if (accepted.has(value)) return undefined;
    const why = check(value);
    if (why === undefined && typeof value === "string" && accepted.size < KEPT) accepted.add(value);
    return why;
  };
}

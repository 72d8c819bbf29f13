// A pure check of a string, remembering what it accepted: a stack names the same members and
// roles in many resources (a team's group in every policy), and each is then checked once.

/** Accepted strings kept at most (then forgotten all at once): a bound on the memory held. */
const KEPT = 65_536;

/** `check` (undefined: accepted, else why not), answering from memory for a string it accepted
 *  before. Refusals are not kept: they are rare and their messages are computed each time. */
export function rememberAccepted(check: (value: string) => string | undefined): (value: string) => string | undefined {
  const accepted = new Set<string>();
  return (value) => {
    if (accepted.has(value)) return undefined;
    const why = check(value);
    if (why === undefined && typeof value === "string") {
      if (accepted.size >= KEPT) accepted.clear();
      accepted.add(value);
    }
    return why;
  };
}

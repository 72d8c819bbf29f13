// How converge's help shows an option (main.ts configures commander with it before any command loads).

/** Help text of an option: its description and, when it has one worth showing, its default as
 *  the value one would type (`10`, not `"10"`; no `[]` for repeatable options). */
export function optionHelp(description: string, defaultValue: unknown, shown?: string): string {
  const empty =
    defaultValue === undefined || defaultValue === false || (Array.isArray(defaultValue) && defaultValue.length === 0);
  if (empty) return description;
  return (
    `${description} (default: ` +
    `${shown ?? (typeof defaultValue === "string" ? defaultValue : JSON.stringify(defaultValue))})`
  );
}

// @bufbuild/cel's evaluator for guardrail rules, loaded only when a stack has rules: its index
// loads the standard library and the protobuf runtime (about 100 ms), which a plan without rules
// never pays (see ../cel-parser.ts, which loads only the parser for IAM conditions).
// The package's type checker (0.6.1) handles constants and identifiers only, so a rule is checked
// at load in two steps: its names against the declared variables and their fields (here), then a
// run of the library's evaluator over typed sample values of every variable (./compile.ts).
import { createRequire } from "node:module";
import { dirname } from "node:path";
import type * as Cel from "@bufbuild/cel";

type CelModule = typeof Cel;
type Wkt = { timestampFromDate(d: Date): unknown };

let loaded: { cel: CelModule; wkt: Wkt } | undefined;

/** The library, required synchronously from its CommonJS build on first use. */
export function celLibrary(): { cel: CelModule; wkt: Wkt } {
  if (loaded) return loaded;
  const require = createRequire(import.meta.url);
  const index = require.resolve("@bufbuild/cel");
  const cel = require(index) as CelModule;
  // The timestamp type of the evaluator is protobuf's, from the copy the package itself uses.
  const wkt = require(require.resolve("@bufbuild/protobuf/wkt", { paths: [dirname(index)] })) as Wkt;
  return (loaded = { cel, wkt });
}

/** The variables every rule sees, with their CEL types (maps of dynamic values where the value
 *  mixes types). */
export function ruleEnv(): Cel.CelEnv {
  const { cel } = celLibrary();
  const S = cel.CelScalar.STRING;
  const D = cel.CelScalar.DYN;
  const variables = {
    change: S,
    member: cel.mapType(S, S),
    role: S,
    object: cel.mapType(S, S),
    condition: cel.mapType(S, D),
    resource: S,
    resources: cel.listType(S),
    stack: S,
    workspace: S,
    policy: cel.mapType(S, D),
    policies: cel.listType(cel.mapType(S, D)),
    lookalike: cel.mapType(S, cel.listType(S)),
    now: D,
  };
  return cel.celEnv({ variables });
}

/** The fields of the variables that are maps with a fixed set of keys. */
export const FIELDS: Record<string, readonly string[]> = {
  member: ["id", "type", "email", "domain"],
  object: ["kind", "name", "project", "location"],
  condition: ["title", "description", "expression", "expires"],
  policy: ["members", "roles", "bindings"],
  lookalike: ["reasons", "looks_like"],
};

/** The variables' names, for messages and the name check. */
export const VARIABLES = [
  "change",
  "member",
  "role",
  "object",
  "condition",
  "resource",
  "resources",
  "stack",
  "workspace",
  "policy",
  "policies",
  "lookalike",
  "now",
];

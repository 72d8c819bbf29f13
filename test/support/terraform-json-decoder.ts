// A decoder faithful to hashicorp/terraform-json's Go types (plan.go, state.go, config.go,
// expression.go, validate.go, logging*.go): the same member names and Go types, decoded with
// encoding/json's rules (a string member takes a string or null, an int an integral number, a
// uint64 a non-negative one, a struct an object or null…), the custom decoders (Expression,
// cty.Type, go-version's Version, time.Time) and the Validate() checks the library runs while
// unmarshalling (format_version present and >= 0.1, < 2.0). Stricter than Go on purpose: a member
// the Go type does not have is an error (Go ignores it), except the few that converge documents
// (`converge`; validate's `errored`); and a member whose Go tag has no omitempty (Terraform always
// prints it, e.g. Change.before, StateResource.schema_version) is required. Terraform's jsonplan
// also always prints applyable, complete and errored, which terraform-json does not decode; they
// are required booleans here. Used by the tests to judge converge's JSON as Terraform's tools would.

type Path = string;

export class DecodeError extends Error {}

const fail = (path: Path, message: string): never => {
  throw new DecodeError(`${path || "(root)"}: ${message}`);
};

export type GoType =
  | { go: "string" | "bool" | "int" | "uint64" | "any" }
  | { go: "ptr" | "slice"; elem: GoType }
  | { go: "map"; elem: GoType }
  | { go: "struct"; name: string; fields: Record<string, Field>; extras?: string[] }
  | { go: "custom"; name: string; decode: (v: unknown, path: Path) => void };

interface Field {
  type: GoType;
  /** The Go tag has no omitempty (or Validate() needs it): must be present. */
  required?: boolean;
}

const S: GoType = { go: "string" };
const B: GoType = { go: "bool" };
const I: GoType = { go: "int" };
const U64: GoType = { go: "uint64" };
const ANY: GoType = { go: "any" };
const ptr = (elem: GoType): GoType => ({ go: "ptr", elem });
const slice = (elem: GoType): GoType => ({ go: "slice", elem });
const map = (elem: GoType): GoType => ({ go: "map", elem });
const opt = (type: GoType): Field => ({ type });
const req = (type: GoType): Field => ({ type, required: true });
const struct = (name: string, fields: Record<string, Field>, extras?: string[]): GoType => ({
  go: "struct",
  name,
  fields,
  ...(extras ? { extras } : {}),
});

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
/** encoding/json's word for a JSON value in its errors. */
const jsonKind = (v: unknown) =>
  Array.isArray(v)
    ? "array"
    : v === null
      ? "null"
      : typeof v === "object"
        ? "object"
        : typeof v === "number"
          ? `number ${v}`
          : typeof v === "boolean"
            ? "bool"
            : typeof v;

/** Decodes `v` as Go's encoding/json would into `t`; throws a DecodeError on the first problem. */
export function decode(t: GoType, v: unknown, path: Path = ""): void {
  if (v === null && t.go !== "custom") return; // null leaves any Go value at its zero value
  switch (t.go) {
    case "string":
      if (typeof v !== "string") fail(path, `cannot unmarshal ${jsonKind(v)} into a Go string`);
      return;
    case "bool":
      if (typeof v !== "boolean") fail(path, `cannot unmarshal ${jsonKind(v)} into a Go bool`);
      return;
    case "int":
    case "uint64":
      if (typeof v !== "number" || !Number.isInteger(v))
        fail(path, `cannot unmarshal ${jsonKind(v)} into a Go ${t.go}`);
      if (t.go === "uint64" && (v as number) < 0) fail(path, `cannot unmarshal ${v} into a Go uint64`);
      return;
    case "any":
      return;
    case "ptr":
      return decode(t.elem, v, path);
    case "slice":
      if (!Array.isArray(v)) fail(path, `cannot unmarshal ${jsonKind(v)} into a Go slice`);
      (v as unknown[]).forEach((x, i) => decode(t.elem, x, `${path}[${i}]`));
      return;
    case "map":
      if (!isObj(v)) fail(path, `cannot unmarshal ${jsonKind(v)} into a Go map`);
      for (const [k, x] of Object.entries(v as object)) decode(t.elem, x, `${path}.${k}`);
      return;
    case "struct":
      return decodeStruct(t, v, path);
    case "custom":
      return t.decode(v, path);
  }
}

function decodeStruct(t: Extract<GoType, { go: "struct" }>, v: unknown, path: Path): void {
  if (!isObj(v)) fail(path, `cannot unmarshal ${jsonKind(v)} into Go struct ${t.name}`);
  const obj = v as Record<string, unknown>;
  for (const [k, x] of Object.entries(obj)) {
    const f = t.fields[k];
    if (!f) {
      if (t.extras?.includes(k)) continue;
      fail(`${path}.${k}`, `${t.name} has no member "${k}"`);
    }
    decode(f!.type, x, `${path}.${k}`);
  }
  for (const [k, f] of Object.entries(t.fields))
    if (f.required && !Object.hasOwn(obj, k)) fail(`${path}.${k}`, `${t.name}.${k} is missing`);
}

// --- custom decoders -----------------------------------------------------------------------------

/** go-version's NewVersion (the forms Terraform's formats use: 1, 1.2, 1.2.3, with a pre-release). */
function parseVersion(s: string): number[] | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/.exec(s);
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
}

const cmp = (a: number[], b: number[]) => a.reduce((r, x, i) => r || Math.sign(x - b[i]!), 0);

/** The Validate() of Plan, State and ValidateOutput: ">= 0.1, < 2.0". */
function checkFormatVersion(v: unknown, path: Path, what: string): void {
  if (typeof v !== "string" || v === "") fail(path, `unexpected ${what} input, format version is missing`);
  const ver = parseVersion(v as string);
  if (!ver) fail(path, `invalid format version "${v}"`);
  if (cmp(ver!, [0, 1, 0]) < 0 || cmp(ver!, [2, 0, 0]) >= 0)
    fail(path, `unsupported ${what} format version: "${v}" does not satisfy ">= 0.1, < 2.0"`);
}

const versionType: GoType = {
  go: "custom",
  name: "version.Version",
  decode: (v, path) => {
    if (typeof v !== "string" || !parseVersion(v)) fail(path, `Malformed version: ${JSON.stringify(v)}`);
  },
};

/** time.Time's UnmarshalJSON: RFC 3339 (fractional seconds allowed). */
const timeType: GoType = {
  go: "custom",
  name: "time.Time",
  decode: (v, path) => {
    if (
      typeof v !== "string" ||
      !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v) ||
      Number.isNaN(Date.parse(v))
    )
      fail(path, `parsing time ${JSON.stringify(v)} as RFC 3339`);
  },
};

/** cty.Type's UnmarshalJSON. */
function decodeCtyType(v: unknown, path: Path): void {
  if (typeof v === "string") {
    if (!["string", "number", "bool", "dynamic"].includes(v)) fail(path, `invalid primitive type name "${v}"`);
    return;
  }
  if (!Array.isArray(v) || typeof v[0] !== "string") return void fail(path, "invalid cty type");
  const [kind, arg] = v as [string, unknown];
  if (["list", "set", "map"].includes(kind)) return decodeCtyType(arg, `${path}[1]`);
  if (kind === "object" && isObj(arg))
    return Object.entries(arg).forEach(([k, t]) => decodeCtyType(t, `${path}[1].${k}`));
  if (kind === "tuple" && Array.isArray(arg)) return arg.forEach((t, i) => decodeCtyType(t, `${path}[1][${i}]`));
  fail(path, `invalid complex type kind "${kind}"`);
}
const ctyType: GoType = {
  go: "custom",
  name: "cty.Type",
  decode: (v, path) => (v === null ? undefined : decodeCtyType(v, path)),
};

/** Expression.UnmarshalJSON: a list of nested blocks (maps of expressions), else ExpressionData. */
const expressionData = struct("ExpressionData", { constant_value: opt(ANY), references: opt(slice(S)) });
const expression: GoType = {
  go: "custom",
  name: "Expression",
  decode: (v, path) => {
    if (Array.isArray(v) && v.every((b) => isObj(b)))
      return v.forEach((b, i) =>
        Object.entries(b as object).forEach(([k, e]) => decode(ptr(expression), e, `${path}[${i}].${k}`)),
      );
    decode(expressionData, v, path);
  },
};

// --- plan.go, state.go, config.go ----------------------------------------------------------------

const importing = struct("Importing", { id: opt(S), unknown: opt(B), identity: opt(ANY) });
export const Change = struct("Change", {
  actions: opt(slice(S)),
  before: req(ANY),
  after: opt(ANY),
  after_unknown: opt(ANY),
  before_sensitive: opt(ANY),
  after_sensitive: opt(ANY),
  importing: opt(ptr(importing)),
  generated_config: opt(S),
  replace_paths: opt(slice(ANY)),
  before_identity: opt(ANY),
  after_identity: opt(ANY),
});
export const ResourceChange = struct("ResourceChange", {
  address: opt(S),
  previous_address: opt(S),
  module_address: opt(S),
  mode: opt(S),
  type: opt(S),
  name: opt(S),
  index: opt(ANY),
  provider_name: opt(S),
  deposed: opt(S),
  change: opt(ptr(Change)),
  action_reason: opt(S),
});
const StateOutput = struct("StateOutput", { sensitive: req(B), value: opt(ANY), type: opt(ctyType) });
const StateResource = struct("StateResource", {
  address: opt(S),
  mode: opt(S),
  type: opt(S),
  name: opt(S),
  index: opt(ANY),
  provider_name: opt(S),
  schema_version: req(U64),
  values: opt(map(ANY)),
  sensitive_values: opt(ANY),
  depends_on: opt(slice(S)),
  tainted: opt(B),
  deposed_key: opt(S),
  identity_schema_version: opt(ptr(U64)),
  identity: opt(map(ANY)),
});
const stateModuleFields: Record<string, Field> = { resources: opt(slice(ptr(StateResource))), address: opt(S) };
const StateModule = struct("StateModule", stateModuleFields);
stateModuleFields.child_modules = opt(slice(ptr(StateModule)));
export const StateValues = struct("StateValues", {
  outputs: opt(map(ptr(StateOutput))),
  root_module: opt(ptr(StateModule)),
});
const stateFields = {
  format_version: req(S),
  terraform_version: opt(S),
  values: opt(ptr(StateValues)),
  checks: opt(slice(ANY)),
};
export const State: GoType = {
  go: "custom",
  name: "State",
  decode: (v, path) => {
    if (v === null) return;
    decode(struct("State", stateFields), v, path);
    checkFormatVersion((v as Record<string, unknown>).format_version, `${path}.format_version`, "state");
  },
};
const ProviderConfig = struct("ProviderConfig", {
  name: opt(S),
  full_name: opt(S),
  alias: opt(S),
  module_address: opt(S),
  expressions: opt(map(ptr(expression))),
  version_constraint: opt(S),
});
const ConfigOutput = struct("ConfigOutput", {
  sensitive: opt(B),
  expression: opt(ptr(expression)),
  description: opt(S),
  depends_on: opt(slice(S)),
});
const ConfigResource = struct("ConfigResource", {
  address: opt(S),
  mode: opt(S),
  type: opt(S),
  name: opt(S),
  provider_config_key: opt(S),
  provisioners: opt(slice(ANY)),
  expressions: opt(map(ptr(expression))),
  schema_version: req(U64),
  count_expression: opt(ptr(expression)),
  for_each_expression: opt(ptr(expression)),
  depends_on: opt(slice(S)),
});
const ConfigVariable = struct("ConfigVariable", { default: opt(ANY), description: opt(S), sensitive: opt(B) });
const configModuleFields: Record<string, Field> = {
  outputs: opt(map(ptr(ConfigOutput))),
  resources: opt(slice(ptr(ConfigResource))),
  variables: opt(map(ptr(ConfigVariable))),
};
const ConfigModule = struct("ConfigModule", configModuleFields);
configModuleFields.module_calls = opt(
  map(
    ptr(
      struct("ModuleCall", {
        source: opt(S),
        expressions: opt(map(ptr(expression))),
        module: opt(ptr(ConfigModule)),
        version_constraint: opt(S),
        depends_on: opt(slice(S)),
      }),
    ),
  ),
);
const Config = struct("Config", {
  provider_config: opt(map(ptr(ProviderConfig))),
  root_module: opt(ptr(ConfigModule)),
});

const planFields: Record<string, Field> = {
  format_version: req(S),
  terraform_version: opt(S),
  variables: opt(map(ptr(struct("PlanVariable", { value: opt(ANY) })))),
  planned_values: opt(ptr(StateValues)),
  resource_drift: opt(slice(ptr(ResourceChange))),
  resource_changes: opt(slice(ptr(ResourceChange))),
  deferred_changes: opt(
    slice(ptr(struct("DeferredResourceChange", { reason: opt(S), resource_change: opt(ptr(ResourceChange)) }))),
  ),
  complete: req(B),
  output_changes: opt(map(ptr(Change))),
  prior_state: opt(State),
  configuration: opt(ptr(Config)),
  relevant_attributes: opt(slice(struct("ResourceAttribute", { resource: req(S), attribute: req(slice(ANY)) }))),
  checks: opt(slice(ANY)),
  timestamp: opt(S),
  action_invocations: opt(slice(ANY)),
  // Terraform's jsonplan prints these always; terraform-json does not decode them.
  applyable: req(B),
  errored: req(B),
};

/** json.Unmarshal into tfjson.Plan, which calls Plan.Validate(). */
export function decodePlan(v: unknown): void {
  decode(struct("Plan", planFields, ["converge"]), v);
  checkFormatVersion((v as Record<string, unknown>).format_version, ".format_version", "plan");
}

// --- validate.go, logging*.go --------------------------------------------------------------------

const Pos = struct("Pos", { line: req(I), column: req(I), byte: req(I) });
const Range = struct("Range", { filename: req(S), start: req(Pos), end: req(Pos) });
export const Diagnostic = struct("Diagnostic", {
  severity: opt(S),
  address: opt(S),
  summary: opt(S),
  detail: opt(S),
  range: opt(ptr(Range)),
  snippet: opt(
    ptr(
      struct("DiagnosticSnippet", {
        context: req(ptr(S)),
        code: req(S),
        start_line: req(I),
        highlight_start_offset: req(I),
        highlight_end_offset: req(I),
        values: req(slice(ANY)),
      }),
    ),
  ),
});

/** json.Unmarshal into tfjson.ValidateOutput (and its Validate()); `errored` is converge's. */
export function decodeValidateOutput(v: unknown): void {
  decode(
    struct(
      "ValidateOutput",
      {
        format_version: req(S),
        valid: req(B),
        error_count: req(I),
        warning_count: req(I),
        diagnostics: req(slice(Diagnostic)),
      },
      ["errored"],
    ),
    v,
  );
  const fv = (v as Record<string, unknown>).format_version;
  if (fv !== "") checkFormatVersion(fv, ".format_version", "validation output");
}

/** tfjson.UnmarshalLogMessage: the envelope every line has, and the bodies of the types the
 *  library knows (version, diagnostic); the others decode as its UnknownLogMessage. Terraform
 *  documents more members than the library decodes, so other members are not refused here. */
export function decodeLogMessage(line: string): { type: string } {
  const v = JSON.parse(line) as unknown;
  if (!isObj(v)) fail("", "a log message is an object");
  const o = v as Record<string, unknown>;
  decode(S, o.type, ".type");
  decode(S, o["@level"], ".@level");
  decode(S, o["@message"], ".@message");
  decode(timeType, o["@timestamp"], ".@timestamp");
  if (o.type === "version") {
    decode(versionType, o.terraform, ".terraform");
    decode(versionType, o.ui, ".ui");
  }
  if (o.type === "diagnostic") decode(req(Diagnostic).type, o.diagnostic, ".diagnostic");
  return { type: String(o.type) };
}

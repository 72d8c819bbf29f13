// The loaded, statically checked stack: what the planner consumes.
import type { DataSourceDriver, IamDriver, IamInputs } from "../drivers/types.js";
import type { BackendConfig } from "../generated/schemas.js";
import type { Graph } from "../graph/graph.js";
import type { Reference } from "../language/expressions.js";
import type { ConfigDecl } from "./inputs.js";
import type { DocPath, SourceDocument } from "../yaml/source.js";

/** One element of a forEach: its key and value. */
export interface Each {
  key: string | number;
  value: unknown;
}

/** An entry of `moved:`. */
export interface Move {
  from: string;
  /** The final address (chains followed) */
  to: string;
  /** Its entry's index under `moved:` (for positions). */
  i?: number;
}

/** The instances of one forEach, for checking references to them. */
export interface ForEachInstances {
  keys: readonly (string | number)[];
  /** The fields an instance has (its type's outputs) */
  fields: readonly string[];
}

export interface LocatedReference extends Reference {
  /** Where the string holding the reference is in the document */
  at: DocPath;
}

export interface ResourceOptionsModel {
  dependsOn: string[];
  protect: boolean;
  /** A delete forgets the resource, revoking nothing. */
  retainOnDelete?: boolean;
  ignoreChanges: string[];
  import?: string;
  /** The collection as written (a list, a map or a `${…}`), when the resource has instances */
  forEach?: unknown;
}

export interface ResourceDecl {
  /** The address: the declaration's name, or `name["key"]` for an instance of a forEach */
  name: string;
  /** The declaration's name under `resources:` (where its values are in the stack file) */
  decl: string;
  /** The element of a forEach this instance was made for */
  each?: Each;
  type: string;
  driver: IamDriver;
  /** Raw properties as written (strings may hold ${…}) */
  properties: Record<string, unknown>;
  options: ResourceOptionsModel;
  refs: LocatedReference[];
  /** Its properties resolved when the stack loaded, when some were interpolated and all were
   *  known then (inputs, variables built from them, functions of those): checked and linted
   *  then, so the plan does not lint them again. */
  loadTimeProperties?: Record<string, unknown>;
  /** What the driver normalised its properties as written to, when the stack loaded (all literal,
   *  no problem), under the provider's project and location then: the plan uses them as long as
   *  its own defaults are the same, instead of normalising again. */
  loadTimeInputs?: { project: string | undefined; location: string | undefined; inputs: IamInputs };
}

export interface VariableDecl {
  name: string;
  /** A raw value (may hold ${…}), or an invoke */
  value?: unknown;
  invoke?: { token: string; driver: DataSourceDriver; arguments: Record<string, unknown> };
  refs: LocatedReference[];
}

export interface OutputDecl {
  name: string;
  value: unknown;
  refs: LocatedReference[];
}

export interface ProviderModel {
  project?: string;
  location?: string;
  /** "google", "embedded" or an http(s) URL */
  endpoint: string;
  /** Absolute path of the embedded emulator's seed file */
  seed?: string;
}

export interface StackModel {
  file: string;
  dir: string;
  name: string;
  description?: string;
  provider: ProviderModel;
  /** Inputs (`config:`) with their values */
  config: Map<string, ConfigDecl>;
  /** The strings of secret values met while loading (secret inputs, forEach collections computed
   *  from a secret): what is shown of the stack is scrubbed of them (./redact.ts). */
  secrets: readonly string[];
  /** Where the state lives (`backend:`); absent: the local file. */
  backend?: BackendConfig;
  variables: Map<string, VariableDecl>;
  resources: Map<string, ResourceDecl>;
  outputs: Map<string, OutputDecl>;
  /** `moved:` entries, each to its final address */
  moved: Move[];
  lint: Record<string, boolean>;
  /** The `policies:` section as written: guardrail rules (../guardrails/rules.ts reads it). */
  policies?: unknown;
  /** Variables and resources; edges from references and dependsOn */
  graph: Graph;
  /** Topological order of graph nodes */
  order: string[];
  source: SourceDocument;
}

// Pulumi's `Config` for program stacks: a program reads the stack's inputs, given as a YAML stack's
// are (--var, --var-file, CONVERGE_VAR_name; a later source wins), typed by the method that reads
// them. Each input read is declared in the stack document's `config:` section, so the loader checks
// the values and their sources as it does a YAML stack's (a --var the program never reads is an
// unknown input), and a secret one is redacted on every channel.
import { UserError } from "../diagnostics/diagnostic.js";
import { typedValue, type InputType, type InputValue } from "../config/inputs.js";
import { currentProgram, type ProgramBuilder } from "./context.js";
import { type Output, secret } from "./output.js";

/** The value given for `name` (the last of the sources in precedence order), if any. */
function given(b: ProgramBuilder, name: string): InputValue | undefined {
  const g = b.given;
  const all = [...g.env, ...g.files, ...g.vars].filter((v) => v.name === name);
  return all[all.length - 1];
}

/** The type an object input is declared with: a list when its value is one, else a map. */
function objectType(v: InputValue): InputType {
  if (!v.text || typeof v.value !== "string") return Array.isArray(v.value) ? "list" : "map";
  return v.value.trimStart().startsWith("[") ? "list" : "map";
}

export class Config {
  /** Pulumi's namespace; converge's inputs are one namespace per stack, so a key is read as is. */
  readonly name: string;

  constructor(name?: string) {
    this.name = name ?? currentProgram("new Config()").stack.name;
  }

  private read(key: string, type: InputType | "object", secretValue: boolean, required: boolean): unknown {
    const b = currentProgram(`config.get("${key}")`);
    const site = b.siteOfCaller();
    const name = key.startsWith(`${this.name}:`) ? key.slice(this.name.length + 1) : key;
    const v = given(b, name);
    if (!v) {
      if (!required) return undefined;
      const summary = `config "${name}" has no value`;
      throw new UserError(
        b.errorAt(
          site,
          summary,
          `Give it with --var ${name}=VALUE, in a --var-file, or in the environment variable CONVERGE_VAR_${name}.`,
        ),
      );
    }
    const t = type === "object" ? objectType(v) : type;
    const typed = typedValue(t, v.value, v.text);
    if ("problem" in typed) {
      const problem = secretValue ? `the value is not a ${t}` : typed.problem;
      throw new UserError(b.errorAt(site, `config "${name}": ${problem}`, `The program reads it as a ${t}.`));
    }
    b.addInput(name, { type: t, ...(secretValue ? { secret: true } : {}) });
    return typed.value;
  }

  get(key: string): string | undefined {
    return this.read(key, "string", false, false) as string | undefined;
  }
  require(key: string): string {
    return this.read(key, "string", false, true) as string;
  }
  getNumber(key: string): number | undefined {
    return this.read(key, "number", false, false) as number | undefined;
  }
  requireNumber(key: string): number {
    return this.read(key, "number", false, true) as number;
  }
  getBoolean(key: string): boolean | undefined {
    return this.read(key, "boolean", false, false) as boolean | undefined;
  }
  requireBoolean(key: string): boolean {
    return this.read(key, "boolean", false, true) as boolean;
  }
  getObject<T>(key: string): T | undefined {
    return this.read(key, "object", false, false) as T | undefined;
  }
  requireObject<T>(key: string): T {
    return this.read(key, "object", false, true) as T;
  }
  getSecret(key: string): Output<string> | undefined {
    const v = this.read(key, "string", true, false) as string | undefined;
    return v === undefined ? undefined : secret(v);
  }
  requireSecret(key: string): Output<string> {
    return secret(this.read(key, "string", true, true) as string);
  }
  getSecretObject<T>(key: string): Output<T> | undefined {
    const v = this.read(key, "object", true, false) as T | undefined;
    return v === undefined ? undefined : secret(v);
  }
  requireSecretObject<T>(key: string): Output<T> {
    return secret(this.read(key, "object", true, true) as T);
  }
}

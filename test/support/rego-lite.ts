// A tiny evaluator for the subset of Rego that conftest policies over Terraform's plan JSON are
// commonly written in, enough to run such a policy unchanged on converge's JSON in a test:
//
//   deny[msg] {                                   set rules: NAME[VAR] { body }
//     rc := input.resource_changes[_]              assignment; `[_]` iterates arrays and objects
//     member := rc.change.after.members[_]         references: input or a bound variable, then
//     member == "allUsers"                            .field, [_], [0], ["key"]
//     msg := sprintf("%s grants %s", [rc.address, member])
//   }
//
// A statement is an assignment, a comparison (==, !=) or a reference that must be defined and not
// false. As in Rego, a reference to something that does not exist is undefined: its statement
// fails for that binding. Not a Rego implementation: anything else is an error (a rule body may
// not hold a "}").

type Env = Record<string, unknown>;
type Expr = { lit: unknown } | { ref: string; path: (string | number | "_")[] } | { sprintf: string; args: Expr[] };

function parseRef(text: string): Expr {
  const m = /^([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[(?:_|\d+|"(?:[^"\\]|\\.)*")\])*)$/.exec(text);
  if (!m) throw new Error(`rego-lite: cannot parse "${text}"`);
  const path = [...m[2]!.matchAll(/\.([A-Za-z_]\w*)|\[(_|\d+|"(?:[^"\\]|\\.)*")\]/g)].map((s) =>
    s[1] !== undefined
      ? s[1]
      : s[2] === "_"
        ? ("_" as const)
        : /^\d+$/.test(s[2]!)
          ? Number(s[2])
          : (JSON.parse(s[2]!) as string),
  );
  return { ref: m[1]!, path };
}

function parseExpr(text: string): Expr {
  const t = text.trim();
  if (/^"(?:[^"\\]|\\.)*"$/.test(t) || /^-?\d+(\.\d+)?$/.test(t) || ["true", "false", "null"].includes(t))
    return { lit: JSON.parse(t) };
  const s = /^sprintf\(\s*("(?:[^"\\]|\\.)*")\s*,\s*\[(.*)\]\s*\)$/.exec(t);
  if (s) return { sprintf: JSON.parse(s[1]!) as string, args: s[2]!.trim() ? s[2]!.split(",").map(parseExpr) : [] };
  return parseRef(t);
}

/** Every value of `e` under `env`, with the bindings made by its `[_]`s (none for the others). */
function values(e: Expr, env: Env): unknown[] {
  if ("lit" in e) return [e.lit];
  if ("sprintf" in e) {
    const args = e.args.map((a) => values(a, env));
    if (args.some((a) => a.length !== 1)) return [];
    let i = 0;
    return [
      e.sprintf.replace(/%[sv]/g, () => {
        const v = args[i++]![0];
        return typeof v === "string" ? v : JSON.stringify(v);
      }),
    ];
  }
  if (!(e.ref in env)) throw new Error(`rego-lite: unbound variable ${e.ref}`);
  let current: unknown[] = [env[e.ref]];
  for (const step of e.path) {
    const next: unknown[] = [];
    for (const v of current) {
      if (step === "_") {
        if (Array.isArray(v)) next.push(...v);
        else if (v && typeof v === "object") next.push(...Object.values(v));
      } else if (v && typeof v === "object" && Object.hasOwn(v, step))
        next.push((v as Record<string | number, unknown>)[step]);
    }
    current = next;
  }
  return current;
}

function statement(line: string): (env: Env) => Env[] {
  const assign = /^([A-Za-z_]\w*)\s*:=\s*(.+)$/.exec(line);
  if (assign) {
    const e = parseExpr(assign[2]!);
    return (env) => values(e, env).map((v) => ({ ...env, [assign[1]!]: v }));
  }
  const cmp = /^(.+?)\s*(==|!=)\s*(.+)$/.exec(line);
  if (cmp) {
    const [a, b] = [parseExpr(cmp[1]!), parseExpr(cmp[3]!)];
    return (env) => {
      const same = values(a, env).some((x) => values(b, env).some((y) => JSON.stringify(x) === JSON.stringify(y)));
      const differ = values(a, env).some((x) => values(b, env).some((y) => JSON.stringify(x) !== JSON.stringify(y)));
      return (cmp[2] === "==" ? same : differ) ? [env] : [];
    };
  }
  const e = parseExpr(line);
  return (env) => (values(e, env).some((v) => v !== false) ? [env] : []);
}

/** Evaluates the policy's set rules on `input`: rule name → the values its head variable took. */
export function evaluate(policy: string, input: unknown): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  const rules = policy.replace(/#[^\n]*/g, "").matchAll(/([A-Za-z_]\w*)\[([A-Za-z_]\w*)\]\s*\{([^}]*)\}/g);
  for (const [, name, head, body] of rules) {
    const steps = body!
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .map(statement);
    let envs: Env[] = [{ input }];
    for (const s of steps) envs = envs.flatMap(s);
    const results = (out[name!] ??= []);
    for (const env of envs)
      if (!results.some((r) => JSON.stringify(r) === JSON.stringify(env[head!]))) results.push(env[head!]);
  }
  return out;
}

// iam-driver.ts's normalizeInputs as it was at 4615a91 (the definition the loader's faster one
// must agree with), kept for test/drivers/normalize-inputs.test.ts.
import { canonicalCondition } from "../../../src/iam/conditions.js";
import { memberProblem, normalizeMembers } from "../../../src/iam/members.js";
import { roleProblem } from "../../../src/iam/roles.js";
import { completeNameOnce, type NameDefaults } from "../../../src/cloud/names.js";
import type { PolicyKind } from "../../../src/gcp/object-kinds.js";
import type { IamInputs, Problem } from "../../../src/drivers/types.js";

export function normalizeInputs(
  spec: { kind: PolicyKind; ownership: "binding" | "member" },
  raw: Record<string, unknown>,
  defaults: NameDefaults,
): { inputs: IamInputs; problems: Problem[] } {
  const isBinding = spec.ownership === "binding";
  const problems: Problem[] = [];
  const inputs: IamInputs & { role: string } = { name: String(raw.name ?? ""), role: String(raw.role ?? "") };
  const named = completeNameOnce(spec.kind, inputs.name, defaults);
  if (typeof named === "string") problems.push({ path: ["name"], message: named });
  else inputs.name = named.full;
  const rp = roleProblem(inputs.role);
  if (rp) problems.push({ path: ["role"], message: rp });
  if (isBinding) {
    const members = Array.isArray(raw.members) ? (raw.members as unknown[]).map(String) : [];
    members.forEach((m, i) => {
      const p = memberProblem(m);
      if (p) problems.push({ path: ["members", i], message: p });
    });
    inputs.members = normalizeMembers(members);
  } else {
    inputs.member = String(raw.member ?? "");
    const p = memberProblem(inputs.member);
    if (p) problems.push({ path: ["member"], message: p });
  }
  const cond = canonicalCondition(raw.condition as IamInputs["condition"]);
  if (cond) inputs.condition = cond;
  return { inputs, problems };
}

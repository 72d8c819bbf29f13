// Issue 12: conditions Google would refuse and policies over Google's 1,500-principal limit are
// errors of `converge plan` (exit 1, FILE:LINE:COLUMN on stderr) before anything is written: a bad
// literal condition stops the stack from loading (no request at all), a bad condition from a
// `${…}` value and an oversized planned policy stop the plan (reads only, no setIamPolicy).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EmulatorWorld } from "../../src/generated/schemas.js";
import { bindingYaml, M, count, ep, rp, setCalls, stackHead } from "./apply-helpers.js";
import { resetStats, runCli, stackTraceLines, stats, totalRequests, useEmulatorWorkspace } from "./helpers.js";

const CROWD = Array.from({ length: 1499 }, (_, i) => `user:u${i}@example.com`);
const SEED: EmulatorWorld = {
  projects: { "my-project": { number: "123456789012" } },
  restorePlans: [
    { name: rp("nightly") },
    { name: rp("crowded"), policy: { bindings: [{ role: "roles/gkebackup.viewer", members: CROWD }] } },
  ],
  endpoints: [{ name: ep("churn") }],
};

const ws = useEmulatorWorkspace(SEED, "converge-cond-");

/** Writes `name.yaml` in the workspace and runs `converge plan` on it there (its state file does not exist yet). */
async function planStack(name: string, text: string, ...extra: string[]) {
  // Relative to the working directory, as diagnostics print it.
  const file = `${name}.yaml`;
  await writeFile(join(ws.dir, file), text);
  const r = await runCli(["plan", "-f", file, "--state", `${name}.state.json`, ...extra], {
    emulator: ws.emu,
    cwd: ws.dir,
  });
  expect(stackTraceLines(r.stderr)).toEqual([]);
  expect(r.stderr).not.toContain("internal error");
  return { ...r, file };
}

/** One conditional binding on the nightly restore plan; the expression is YAML as written (line 14). */
const conditional = (expressionYaml: string) =>
  `${stackHead("cond")}` +
  `${bindingYaml("grant", "nightly", "roles/gkebackup.admin", ["user:oncall@example.com"])}      ` +
  `condition:\n        title: t\n        expression: ${expressionYaml}\n`;

// expression YAML, the column of the error in line 14 (the scalar starts at column 21), words of the message
const BAD: { name: string; yaml: string; column: number; words: string[] }[] = [
  { name: "a string, not a boolean", yaml: `"'hello'"`, column: 22, words: ["boolean", "string"] },
  { name: "a timestamp plus an int", yaml: "request.time + 1", column: 34, words: ["+", "timestamp", "int"] },
  {
    name: "an attribute that does not exist",
    yaml: `resource.nme.startsWith("x")`,
    column: 30,
    words: ['"resource.nme"', '"resource.name"'],
  },
  { name: "an unknown root attribute", yaml: `origin.ip == "10.0.0.1"`, column: 21, words: ['"origin"'] },
  { name: "a function IAM does not have", yaml: `resource.name.contains("prod")`, column: 35, words: ["contains()"] },
  {
    name: "a time zone that does not exist",
    yaml: `request.time.getHours("Europe/Berln") >= 9`,
    column: 43,
    words: ['"Europe/Berln"', "time zone"],
  },
  {
    name: "a timestamp that is not RFC 3339",
    yaml: `request.time < timestamp("2027-13-01")`,
    column: 46,
    words: ['"2027-13-01"', "RFC 3339"],
  },
  {
    name: "an int compared with a string",
    yaml: `destination.port == "22"`,
    column: 38,
    words: ["==", "int", "string"],
  },
  { name: "a macro", yaml: `request.auth.access_levels.exists(l, l == "x")`, column: 48, words: ["exists()"] },
  { name: "a parse error", yaml: `request.time <`, column: 34, words: ["not valid CEL"] },
];

describe("a condition Google would refuse stops `converge plan` at the expression, before any request", () => {
  it.each(BAD)("$name", async (c) => {
    const r = await planStack(`bad-${BAD.indexOf(c)}`, conditional(c.yaml));
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toBe("");
    const line = r.stderr.split("\n").find((l) => l.startsWith(`${r.file}:14:${c.column}: Error: grant: `));
    expect(line, r.stderr).toBeDefined();
    for (const w of c.words) expect(line).toContain(w);
    expect(r.stderr).toContain("[lint: invalid-condition]");
  });

  it("none of them sent anything to the emulator", async () => {
    const s = await stats(ws.emu);
    expect(totalRequests(s), JSON.stringify(s.requests)).toBe(0);
  });

  it("good conditions from Google's attribute reference plan fine (the quickstart's included)", async () => {
    const good = [
      `request.time < timestamp("2027-01-01T00:00:00Z")`,
      `request.time.getDayOfWeek("Europe/Berlin") >= 1 && request.time.getHours("+01:00") <= 17`,
      `resource.type == "compute.googleapis.com/Instance" && resource.name.extract("projects/{project}/") == "p"`,
      `resource.matchTag("123456789012/env", "prod") || resource.hasTagKeyId("tagKeys/123")`,
      `api.getAttribute("iam.googleapis.com/modifiedGrantsByRole", []).hasOnly(["roles/pubsub.editor"])`,
      `"accessPolicies/1/accessLevels/CorpNet" in request.auth.access_levels && destination.port < 3001`,
      `!compute.isForwardingRuleCreationOperation() || compute.matchLoadBalancingSchemes(["INTERNAL"])`,
      `request.time > timestamp("2024-04-12T14:30:00Z") - duration("5184000s") && request.path.startsWith("/admin")`,
    ];
    for (const [i, g] of good.entries()) {
      const r = await planStack(`good-${i}`, conditional(`'${g}'`));
      expect(r.code, `${g}\n${r.stderr}`).toBe(0);
    }
  });
});

describe("a bad condition from a `${…}` value stops the plan before any write", () => {
  it("points at the expression that references it and names the value", async () => {
    await resetStats(ws.emu);
    const text = conditional(`"\${window}"`).replace(
      "resources:\n",
      `variables:\n  window: request.time + 1\nresources:\n`,
    );
    const r = await planStack("resolved", text);
    expect(r.code, r.stderr).toBe(1);
    const line = r.stderr.split("\n").find((l) => l.startsWith(`${r.file}:16:`) && l.includes("Error: grant: "));
    expect(line, r.stderr).toBeDefined();
    expect(line).toMatch(/timestamp.*int/);
    expect(r.stderr).toContain('"${window}"');
    expect(setCalls(await stats(ws.emu))).toBe(0);
  });
});

describe("more than 1,500 principals in one policy", () => {
  it("a plan that would take a live policy over the limit errors, naming the object and the count", async () => {
    await resetStats(ws.emu);
    const text =
      `${stackHead("crowd")}` +
      `${bindingYaml("admins", "crowded", "roles/gkebackup.admin", ["user:a@example.com", "user:b@example.com"])}`;
    const r = await planStack("crowd", text);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${rp("crowded")}`);
    expect(r.stderr).toContain("1501 principals");
    expect(r.stderr).toContain("1,500");
    expect(r.stderr).toMatch(/^crowd\.yaml:\d+:\d+: Error: /m);
    const s = await stats(ws.emu);
    expect(count(s, M.rpGet)).toBeGreaterThan(0);
    expect(setCalls(s)).toBe(0);
  });

  it("apply refuses it the same way and writes nothing", async () => {
    await resetStats(ws.emu);
    const r = await runCli(["apply", "-f", "crowd.yaml", "--state", "crowd.state.json", "--auto-approve"], {
      emulator: ws.emu,
      cwd: ws.dir,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("1501 principals");
    expect(setCalls(await stats(ws.emu))).toBe(0);
  });

  it("exactly 1,500 principals plan fine", async () => {
    const text =
      `${stackHead("crowd-ok")}` +
      `${bindingYaml("admins", "crowded", "roles/gkebackup.admin", ["user:a@example.com"])}`;
    const r = await planStack("crowd-ok", text);
    expect(r.code, r.stderr).toBe(0);
  });

  it("a stack listing more than 1,500 members for one object is refused when it loads", async () => {
    await resetStats(ws.emu);
    const many = Array.from({ length: 1501 }, (_, i) => `user:m${i}@example.com`);
    const r = await planStack(
      "many",
      `${stackHead("many")}${bindingYaml("all", "nightly", "roles/gkebackup.viewer", many)}`,
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(rp("nightly"));
    expect(r.stderr).toContain("1501");
    expect(totalRequests(await stats(ws.emu))).toBe(0);
  });
});

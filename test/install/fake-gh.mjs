#!/usr/bin/env node
// A stand-in for GitHub's `gh` CLI in the workflow test (test/install/init-ci-github-postgres.test.ts):
// answers the calls .github/workflows/converge.yml makes, from and into the JSON file FAKE_GH_STATE
// ({ comments: [{ id, body }], pr, head, run, artifact, calls: [...] }).
import { cpSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const file = process.env.FAKE_GH_STATE;
const s = JSON.parse(readFileSync(file, "utf8"));
const args = process.argv.slice(2);
s.calls.push(args.join(" "));
const value = (flag) => args[args.indexOf(flag) + 1];
const path = args.find((a, i) => i > 0 && !a.startsWith("-") && !args[i - 1].startsWith("-")) ?? "";
let out = "";
if (args[0] === "api") {
  const method = args.includes("-X") ? value("-X") : "GET";
  const body = () => readFileSync(value("-F").replace(/^body=@/, ""), "utf8");
  if (/\/issues\/\d+\/comments$/.test(path) && method === "GET") {
    out = String(s.comments.find((c) => c.body.startsWith("<!-- converge-plan -->"))?.id ?? "");
  } else if (/\/issues\/\d+\/comments$/.test(path) && method === "POST") {
    s.comments.push({ id: 100 + s.comments.length, body: body() });
  } else if (/\/issues\/comments\/\d+$/.test(path) && method === "PATCH") {
    s.comments.find((c) => String(c.id) === path.split("/").pop()).body = body();
  } else if (/\/commits\/[^/]+\/pulls$/.test(path)) out = String(s.pr);
  else if (/\/pulls\/\d+$/.test(path)) out = s.head;
  else throw new Error(`fake gh: no answer for ${args.join(" ")}`);
} else if (args[0] === "run" && args[1] === "list") {
  out = String(s.run);
} else if (args[0] === "run" && args[1] === "download") {
  for (const f of readdirSync(s.artifact)) cpSync(join(s.artifact, f), join(value("--dir"), f));
} else throw new Error(`fake gh: no answer for ${args.join(" ")}`);
writeFileSync(file, JSON.stringify(s));
if (out) process.stdout.write(`${out}\n`);

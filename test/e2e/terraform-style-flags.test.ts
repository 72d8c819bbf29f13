// A Terraform-style flag (`-var-file=dev.yaml`, `-auto-approve`) is one dash short of converge's
// long option: the error says which option was meant (issue 38, item 2), exit 1, nothing runs.
import { describe, expect, it } from "vitest";
import { runCli } from "./helpers.js";

describe("Terraform-style flags", () => {
  it("get a did-you-mean naming converge's option, value kept", async () => {
    for (const [args, meant] of [
      [["plan", "-var-file=dev.yaml"], "--var-file=dev.yaml"],
      [["apply", "-auto-approve"], "--auto-approve"],
      [["state", "list", "-state=x.json"], "--state=x.json"],
    ] as const) {
      const r = await runCli([...args]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `error: unknown option '${args.at(-1)}' (did you mean ${meant}? converge's long options take two dashes)`,
      );
      expect(r.stdout).toBe("");
    }
  });

  it("leave what follows -- alone", async () => {
    const r = await runCli(["state", "rm", "--state", "/nonexistent/x.json", "--", "-state"]);
    expect(r.stderr).not.toContain("did you mean");
  });
});

// Issue 18, secrets: sensitivity follows a value through interpolation, field access and
// functions; plans carry Terraform's after_sensitive; what is shown is scrubbed of secrets.
import { describe, expect, it } from "vitest";
import { resolveValue } from "../../src/language/resolve.js";
import { isSensitive, plain, sensitive } from "../../src/language/sensitive.js";
import { scrubText, secretList } from "../../src/config/redact.js";

const scope = (root: string) =>
  root === "token"
    ? { value: sensitive("hunter22") }
    : root === "m"
      ? { value: sensitive({ a: "x" }) }
      : root === "open"
        ? { value: "o" }
        : undefined;
const resolve = (v: unknown) => resolveValue(v, ["x"], scope, undefined, []);

describe("sensitive values", () => {
  it("stay sensitive through interpolation, fields and functions; others stay plain", () => {
    expect(isSensitive(resolve("${token}"))).toBe(true);
    expect(isSensitive(resolve("user:${token}@example.com"))).toBe(true);
    expect(isSensitive(resolve("${m.a}"))).toBe(true);
    expect(isSensitive(resolve({ "fn::join": ["-", ["${token}", "b"]] }))).toBe(true);
    expect(isSensitive(resolve({ "fn::secret": "${open}" }))).toBe(true);
    expect(resolve("a-${open}")).toBe("a-o");
    expect(plain(resolve({ k: ["user:${token}@example.com"] }))).toEqual({ k: ["user:hunter22@example.com"] });
  });

  it("are scrubbed from text: inside longer strings, and short ones only when whole", () => {
    const secrets = secretList(["hunter22", "ab"]);
    expect(scrubText("user:hunter22@example.com", secrets)).toBe("user:(sensitive value)@example.com");
    expect(scrubText("about", secrets)).toBe("about");
    expect(scrubText("ab", secrets)).toBe("(sensitive value)");
  });
});

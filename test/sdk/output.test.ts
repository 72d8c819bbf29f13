// Outputs as they go into the stack document: references become `${…}`, literal text is escaped,
// values known while the program runs are written as they are.
import { describe, expect, it } from "vitest";
import { encode, interpolate, output, referenceOutput } from "../../src/sdk/output.js";
import { parseTemplate } from "../../src/language/expressions.js";

describe("encode", () => {
  it("writes references, property and index access as interpolations", () => {
    const lake = referenceOutput<{ labels: Record<string, string>; backends: { name: string }[] }>("lake");
    expect(encode(lake.labels.owner)).toBe("${lake.labels.owner}");
    expect(encode(lake.labels["a b"])).toBe('${lake.labels["a b"]}');
    expect(encode(lake.backends[0]!.name)).toBe("${lake.backends[0].name}");
    expect(encode({ members: [lake.labels.owner, "user:a@x.com"], skip: undefined })).toEqual({
      members: ["${lake.labels.owner}", "user:a@x.com"],
    });
  });

  it("escapes every $ of literal text, so none of it is read as an interpolation", () => {
    const owner = referenceOutput<string>("lake", ["owner"]);
    const s = encode(interpolate`a\${b}$$ ${owner} ${"${x}"} ${output(2)}`) as string;
    expect(s).toBe("a$${b}$$$$ ${lake.owner} $${x} 2");
    const t = parseTemplate(s);
    expect(t).toMatchObject({ parts: ["a${b}$$ ", { root: "lake", text: "lake.owner" }, " ${x} 2"] });
    expect(encode("cost: $5")).toBe("cost: $$5");
  });

  it("runs apply on a value known now, and refuses one known only during apply", () => {
    expect(encode(output({ n: 2 }).n.apply((n) => n * 21))).toBe(42);
    expect(() => referenceOutput<string>("viewers", ["etag"]).apply((e) => e.length)).toThrow(
      /known only during apply/,
    );
  });

  it("is not a promise: awaiting an output gives the output", async () => {
    const o = referenceOutput<string>("x");
    expect(encode(await o)).toBe("${x}");
  });
});

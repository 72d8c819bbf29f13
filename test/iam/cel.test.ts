// src/base/cel-parser.ts loads @bufbuild/cel's parser by its own file (the package's index loads its
// evaluator and the protobuf runtime too). It must be the very parser the index exports: the same
// trees for the same expressions, the same errors for bad ones.
import { createRequire } from "node:module";
import type * as Cel from "@bufbuild/cel";
import { describe, expect, it } from "vitest";
import { loadCelParser, parseCel as parse } from "../../src/base/cel-parser.js";

const index = createRequire(import.meta.url)("@bufbuild/cel") as typeof Cel;

describe("the CEL parser", () => {
  it.each([
    'request.time < timestamp("2027-01-01T00:00:00Z")',
    'resource.name.startsWith("projects/p/locations/l/restorePlans/nightly") && ' +
      'resource.type == "gkebackup.googleapis.com/RestorePlan"',
    "request.time.getHours('Europe/Berlin') >= 9 || !(resource.service in ['a', 'b'])",
    "has(resource.labels.env) ? resource.labels['env'] == 'prod' : 1u + 2 * 3.5 > -4",
  ])("gives the index's tree for %s", (expression) => {
    expect(parse(expression)).toEqual(index.parse(expression));
  });

  it.each(["request.time <", "a ? b", "'unterminated"])("fails as the index does on %s", (expression) => {
    let mine: unknown;
    let theirs: unknown;
    try {
      parse(expression);
    } catch (e) {
      mine = (e as Error).message;
    }
    try {
      index.parse(expression);
    } catch (e) {
      theirs = (e as Error).message;
    }
    expect(theirs).toBeTruthy();
    expect(mine).toBe(theirs);
  });
});

describe("loading the CEL parser", () => {
  const fakeRequire = (files: Record<string, unknown>) => {
    const req = (id: string) => {
      if (!(id in files)) throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
      return files[id];
    };
    req.resolve = () => "/nm/@bufbuild/cel/dist/cjs/index.js";
    return req as Parameters<typeof loadCelParser>[0];
  };
  const own = () => "own";
  const fromIndex = () => "index";

  it("takes parse.js beside the index, without loading the index", () => {
    expect(loadCelParser(fakeRequire({ "/nm/@bufbuild/cel/dist/cjs/parse.js": { parse: own } }))).toBe(own);
  });

  it("falls back to the index when a release has no parse.js, or one without parse", () => {
    expect(loadCelParser(fakeRequire({ "/nm/@bufbuild/cel/dist/cjs/index.js": { parse: fromIndex } }))).toBe(fromIndex);
    expect(
      loadCelParser(
        fakeRequire({
          "/nm/@bufbuild/cel/dist/cjs/parse.js": { other: own },
          "/nm/@bufbuild/cel/dist/cjs/index.js": { parse: fromIndex },
        }),
      ),
    ).toBe(fromIndex);
  });
});

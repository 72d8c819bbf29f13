// Trims a Google discovery document to the methods the emulator serves and the schemas they
// reach, keeping its revision and top-level parameters, for the conformance suite
// (test/conformance/). Usage: node scripts/trim-discovery.mjs <full.json> <out.json> <resource.path>:<m1,m2> ...
import { readFileSync, writeFileSync } from "node:fs";

const [input, output, ...wanted] = process.argv.slice(2);
if (!input || !output || wanted.length === 0) {
  console.error("usage: trim-discovery.mjs <full.json> <out.json> <projects.locations.things>:<get,list> ...");
  process.exit(2);
}
const doc = JSON.parse(readFileSync(input, "utf8"));
const KEEP = [
  "kind",
  "discoveryVersion",
  "id",
  "name",
  "version",
  "revision",
  "title",
  "rootUrl",
  "mtlsRootUrl",
  "servicePath",
  "baseUrl",
  "basePath",
  "batchPath",
  "protocol",
  "ownerDomain",
  "ownerName",
  "parameters",
  "auth",
];
const out = Object.fromEntries(KEEP.filter((k) => k in doc).map((k) => [k, doc[k]]));
out.resources = {};
const refs = new Set();
const collect = (node) => {
  if (Array.isArray(node)) node.forEach(collect);
  else if (node && typeof node === "object") {
    if (typeof node.$ref === "string" && !refs.has(node.$ref)) {
      refs.add(node.$ref);
      collect(doc.schemas[node.$ref]);
    }
    Object.values(node).forEach(collect);
  }
};
for (const spec of wanted) {
  const [path, methods] = spec.split(":");
  let from = doc;
  let to = out;
  for (const seg of path.split(".")) {
    from = from.resources[seg];
    to.resources ??= {};
    to = to.resources[seg] ??= {};
  }
  to.methods = {};
  for (const m of methods.split(",")) {
    if (!from.methods[m]) throw new Error(`${path}.${m} is not in ${input}`);
    to.methods[m] = from.methods[m];
    collect(from.methods[m]);
  }
}
out.schemas = Object.fromEntries([...refs].sort().map((r) => [r, doc.schemas[r]]));
writeFileSync(output, `${JSON.stringify(out, null, 2)}\n`);

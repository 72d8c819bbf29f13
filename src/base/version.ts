// The tool's version and the provider schema version it implements (seed section 9).
import { readFileSync } from "node:fs";

/** The package's own package.json: the nearest above this module, which runs from dist/ or, in
 *  the bundled CLI, from dist/bundle/ (neither holds a package.json). */
function ownPackage(): { name: string; version: string; root: URL } {
  for (let dir = new URL("./", import.meta.url); ; dir = new URL("../", dir)) {
    try {
      const json = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as { name: string; version: string };
      return { ...json, root: dir };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT" || dir.pathname === "/") throw e;
    }
  }
}

const pkg = ownPackage();

export const TOOL_VERSION: string = pkg.version;
/** The npm package's name (the command is `converge`): what a program stack imports. */
export const PACKAGE_NAME: string = pkg.name;
/** The package's root folder (the one holding its package.json), as a file: URL ending in "/". */
export const PACKAGE_ROOT: URL = pkg.root;
export const PROVIDER_SCHEMA_VERSION = "0.32.0";
const PROVIDER_SCHEMA_STATUS = "preview";
/** The format of converge's own plan, which a saved plan file holds (schemas/plan.schema.json):
 *  a saved plan of another format is refused by `apply FILE` and `show FILE`, saying so. */
export const PLAN_FORMAT = "2";

export function versionText(): string {
  return `converge ${TOOL_VERSION}\nprovider schema cloudnative ${PROVIDER_SCHEMA_VERSION} (${PROVIDER_SCHEMA_STATUS})`;
}

// The tool's version and the provider schema version it implements (seed section 9).
import { readFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

export const TOOL_VERSION: string = pkg.version;
export const PROVIDER_SCHEMA_VERSION = "0.32.0";
export const PROVIDER_SCHEMA_STATUS = "preview";

export function versionText(): string {
  return `converge ${TOOL_VERSION}\nprovider schema cloudnative ${PROVIDER_SCHEMA_VERSION} (${PROVIDER_SCHEMA_STATUS})`;
}

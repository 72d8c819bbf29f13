// A package a program stack imports that cannot be found from the stack's folder: the error names
// the import's line and the command that installs it. The module resolvers' own messages span
// lines (CommonJS adds its "Require stack"), which a one-line summary cannot hold.
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { type Diagnostic, error } from "../diagnostics/diagnostic.js";
import { PACKAGE_NAME } from "../base/version.js";

/** The name converge's package had before it was published under PACKAGE_NAME (an unrelated
 *  package holds it on the npm registry). */
const OLD_NAME = "converge";

/** The package a module-not-found error is about (a bare name, not a relative path), if it is one. */
function missingPackage(e: unknown): string | undefined {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") return undefined;
  const m = /^Cannot find (?:module|package) '([^']+)'/.exec(String((e as Error).message));
  const spec = m?.[1];
  if (!spec || /^[./]|^[a-z]+:/i.test(spec)) return undefined;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Where `pkg` is first imported in `file` (the quote that opens its name). */
function importSite(file: string, pkg: string): { line: number; column: number } | undefined {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = new RegExp(`(["'\`])${pkg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:/[^"'\`]*)?\\1`).exec(lines[i]!);
    if (m) return { line: i + 1, column: m.index + 1 };
  }
  return undefined;
}

/** The diagnostic for a package `file` imports that is not installed, or undefined if `e` is another error. */
export function missingPackageDiagnostic(file: string, e: unknown): Diagnostic | undefined {
  const pkg = missingPackage(e);
  if (!pkg) return undefined;
  const where = { file, ...importSite(file, pkg) };
  if (pkg === OLD_NAME && PACKAGE_NAME !== OLD_NAME) {
    return error(`the package ${OLD_NAME} was renamed ${PACKAGE_NAME}`, {
      ...where,
      detail:
        `Import from "${PACKAGE_NAME}" instead of "${OLD_NAME}" (the name ${OLD_NAME} on the npm registry is ` +
        `another project's package), and install it beside the stack:\n  npm install --save-dev ${PACKAGE_NAME}`,
    });
  }
  const install = pkg === PACKAGE_NAME ? `npm install --save-dev ${pkg}` : `npm install ${pkg}`;
  return error(`the package ${pkg} is not installed where ${basename(file)} can import it`, {
    ...where,
    detail: `Install it in the stack's folder or one above it:\n  ${install}`,
  });
}

// `plan --format html` and `show --format html PLANFILE`: the access review as one self-contained
// page. Styles and script are inline and allowed by hash in a Content-Security-Policy that allows
// nothing else (no request of any kind leaves the page); the plan's data is a JSON island the
// script reads and builds the page from with textContent only, so no value is ever parsed as HTML.
import { createHash } from "node:crypto";
import type { Plan } from "../../../generated/schemas.js";
import type { Diagnostic } from "../../../diagnostics/diagnostic.js";
import { reviewData } from "./review-data.js";
import { PAGE_STYLE } from "./page-style.js";
import { CLIENT_CORE } from "./client-core.js";
import { CLIENT_VIEWS } from "./client-views.js";
import { CLIENT_DETAIL } from "./client-detail.js";

/** JSON that can stand inside a <script> element: no `<`, `>` or `&` (no `</script>`, no
 *  `<!--`), and no U+2028/U+2029 (line terminators in older JavaScript). */
export function jsonForScript(value: unknown): string {
  const escape = (ch: string) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, escape);
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/** Text for an HTML text node or attribute value (the shell's few values: the title). */
function htmlText(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

export function planHtml(plan: Plan, lint: readonly Diagnostic[]): string {
  const data = jsonForScript(reviewData(plan, lint));
  const script = `\n(function () {\n"use strict";\n${CLIENT_CORE}\n${CLIENT_VIEWS}\n${CLIENT_DETAIL}\n})();\n`;
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(PAGE_STYLE)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="referrer" content="no-referrer">',
    `<title>converge access review: ${htmlText(plan.stack.name)}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    "</head>",
    "<body>",
    "<noscript>This review page needs JavaScript; the plan's text and Markdown views show the same data.</noscript>",
    '<main id="app"></main>',
    `<script type="application/json" id="review-data">${data}</script>`,
    `<script>${script}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

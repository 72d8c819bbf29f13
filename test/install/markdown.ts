// Reading the project's Markdown as a test needs it: its links (outside code), its headings'
// anchors as GitHub makes them, and its fenced blocks in order.

/** The text with fenced code blocks blanked (their lines kept). */
function withoutFences(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, " "));
}

/** The text with fenced code blocks and inline code spans blanked (their lines kept). */
export function prose(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, (span) => " ".repeat(span.length));
}

export interface Link {
  target: string;
  line: number;
}

/** Every link of the prose: [text](target), <scheme:…> autolinks, and bare URLs (GitHub links them). */
export function links(text: string): Link[] {
  const out: Link[] = [];
  prose(text)
    .split("\n")
    .forEach((l, i) => {
      const inline = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
      for (const m of l.matchAll(inline)) out.push({ target: m[1]!, line: i + 1 });
      for (const m of l.matchAll(/<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)) out.push({ target: m[1]!, line: i + 1 });
      for (const m of l.replace(/\]\([^)]*\)|<[^>]*>/g, "").matchAll(/\b(?:https?:\/\/|www\.)\S+/gi)) {
        out.push({ target: m[0], line: i + 1 });
      }
    });
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation other than - and _ dropped, spaces to -. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown text's headings (a repeated one gets -1, -2…, as on GitHub). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const l of withoutFences(text).split("\n")) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l);
    if (!m) continue;
    const base = anchorOf(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n ? `${base}-${n}` : base);
  }
  return out;
}

export interface Fence {
  lang: string;
  body: string;
}

/** The fenced code blocks, in order. */
export function fences(text: string): Fence[] {
  return [...text.matchAll(/^```([^\n]*)\n([\s\S]*?)^```\s*$/gm)].map((m) => ({ lang: m[1]!.trim(), body: m[2]! }));
}

// The review page's stylesheet (inline in the page, allowed by its hash).
export const PAGE_STYLE = `
:root { color-scheme: light dark; --add: #1a7f37; --rev: #cf222e; --chg: #9a6700; --dim: #6e7781; --line: #d0d7de;
  --bg2: rgba(127,127,127,.08); }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1400px; margin: 0 auto; padding: 16px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 24px 0 8px; }
h3 { font-size: 14px; margin: 12px 0 4px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px;
  overflow-wrap: anywhere; }
.meta { color: var(--dim); overflow-wrap: anywhere; }
.verdict { display: flex; flex-wrap: wrap; gap: 8px; margin: 12px 0; }
.tile { border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; min-width: 96px; }
.tile b { display: block; font-size: 20px; }
.tile.rev b { color: var(--rev); } .tile.add b { color: var(--add); } .tile.chg b { color: var(--chg); }
.ok { color: var(--add); } .bad { color: var(--rev); } .warn { color: var(--chg); }
table { border-collapse: collapse; }
td, th { border: 1px solid var(--line); padding: 3px 6px; vertical-align: top; text-align: left; }
.scroll { overflow-x: auto; max-width: 100%; }
.filters { display: flex; flex-wrap: wrap; gap: 8px; align-items: end; margin: 8px 0; }
.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--dim); }
.filters input, .filters select { font: inherit; padding: 3px 6px; min-width: 150px; }
.pager { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 6px 0; }
button { font: inherit; padding: 2px 10px; cursor: pointer; }
button.link { border: 0; background: none; padding: 0; color: inherit; text-decoration: underline dotted;
  text-align: left; }
tr.group th { background: var(--bg2); font-weight: 600; }
#matrix th.p { max-width: 280px; } #matrix thead th { max-width: 180px; font-weight: 500; }
.chip { display: block; white-space: nowrap; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
.s1 { color: var(--add); } .s2 { color: var(--rev); text-decoration: line-through; } .s3 { color: var(--chg); }
.s0 { color: var(--dim); }
.legend span { margin-right: 12px; }
.flag { color: var(--chg); font-weight: 600; }
.panel { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
[hidden] { display: none !important; }
`;

// Limits on the structure of a stack's YAML, checked before anything walks it recursively: how
// deep maps and lists nest, and what aliases may do. Each violation is an error at its position.
//
// MAX_DEPTH is 64 levels of maps and lists. A real stack needs about six (resources → a resource
// → properties → condition, or a variable holding a map of lists); 64 leaves ten times that for
// data in variables. Past a few hundred levels yaml's composer and converge's own recursive walks
// (schema validation, interpolation, state serialisation) would exhaust the call stack, so the
// limit is checked on the parser's tokens, without recursion, before any of them runs.
//
// An anchor may be repeated by aliases at most MAX_ALIAS_USES times in all, counting the uses
// inside other repeated anchors: ten anchors that each repeat the previous one ten times would
// otherwise make 10^10 values from ten lines. So no anchor's content is walked more than
// MAX_ALIAS_USES times, and the whole value is at most MAX_ALIAS_USES + 1 times the size of the
// text. This replaces the yaml package's maxAliasCount, which fails without a position, and whose
// count doubles with each anchor of a chain even when each is used once.
import type { Alias, CST, Document, Node } from "yaml";
import { yaml } from "./yaml-lib.js";
import {
  jsonTooDeepAt,
  MAX_STACK_DEPTH,
  STACK_TOO_DEEP_DETAIL,
  tooDeep,
  yamlTooDeepAt,
} from "../diagnostics/nesting.js";

export const MAX_DEPTH = MAX_STACK_DEPTH;
export const MAX_ALIAS_USES = 100;

export interface StructureError {
  /** Offset in the text */
  offset: number;
  summary: string;
  detail: string;
}

/** The wording of every depth error (../diagnostics/nesting.ts), for a stack. */
export const TOO_DEEP = tooDeep(MAX_DEPTH);
export const TOO_DEEP_DETAIL = STACK_TOO_DEEP_DETAIL;

/** The offset of the first map or list of a YAML text's tokens nested deeper than MAX_DEPTH. */
export const firstTooDeep = (tokens: readonly CST.Token[]): number | undefined => yamlTooDeepAt(tokens, MAX_DEPTH);

/** Whether JSON text (a list or map given on the command line or in the environment) opens more
 *  than MAX_DEPTH lists and maps inside each other; brackets inside strings do not count. */
export function jsonNestsTooDeep(text: string): boolean {
  return jsonTooDeepAt(text, MAX_DEPTH) !== undefined;
}

export function tooDeepError(offset: number): StructureError {
  return { offset, summary: TOO_DEEP, detail: TOO_DEEP_DETAIL };
}

interface Visit {
  node: unknown;
  depth: number;
  /** The alias written in the text whose repetition this node is part of */
  via?: Alias;
}

const start = (n: Node) => n.range?.[0] ?? 0;

function badAlias(alias: Alias, target: Node | undefined): StructureError | undefined {
  if (!target)
    return {
      offset: start(alias),
      summary: `undefined alias "*${alias.source}": no anchor &${alias.source} comes before it`,
      detail: "An alias *name repeats the node marked &name earlier in the file.",
    };
  const [from, to] = target.range ?? [0, 0];
  if (from <= start(alias) && start(alias) < to) {
    return {
      offset: start(alias),
      summary: `alias "*${alias.source}" is inside the node it refers to`,
      detail: "An alias repeats a node written before it; repeating the node that contains it would never end.",
    };
  }
  return undefined;
}

/**
 * The first alias problem of `doc`: an alias with no anchor before it, an alias inside its own
 * anchor, an anchor repeated more than MAX_ALIAS_USES times, or nesting that aliases make deeper
 * than MAX_DEPTH. Walks the document as its value would be, repetitions included, without
 * recursion, and stops at the first problem (the MAX_ALIAS_USES rule bounds the walk).
 */
export function firstAliasError(doc: Document): StructureError | undefined {
  const { isAlias, isCollection, isPair } = yaml();
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node>();
  const uses = new Map<Node, number>();
  const stack: Visit[] = [{ node: doc.contents, depth: 0 }];
  while (stack.length) {
    const { node, depth, via } = stack.pop()!;
    if (isAlias(node)) {
      // Aliases resolve in the order they are written; a repeated one was resolved then.
      if (!via) {
        const target = anchors.get(node.source);
        const bad = badAlias(node, target);
        if (bad) return bad;
        targets.set(node, target!);
      }
      const target = targets.get(node)!;
      const n = (uses.get(target) ?? 0) + 1;
      uses.set(target, n);
      if (n > MAX_ALIAS_USES) {
        const culprit = via ?? node;
        return {
          offset: start(culprit),
          summary:
            `too many aliases: anchor "&${node.source}" is repeated more than ` +
            `${MAX_ALIAS_USES} times (here by alias "*${culprit.source}")`,
          detail:
            `An anchor may be repeated at most ${MAX_ALIAS_USES} times, counting repetitions inside repeated ` +
            `anchors: this stops alias bombs. Write the values out, or share them through a variable and \${…}.`,
        };
      }
      stack.push({ node: target, depth, via: via ?? node });
      continue;
    }
    if (!via && (node as Node | null)?.anchor) anchors.set((node as Node).anchor!, node as Node);
    if (!isCollection(node)) continue;
    if (depth + 1 > MAX_DEPTH) {
      return via
        ? { offset: start(via), summary: `${TOO_DEEP} through alias "*${via.source}"`, detail: TOO_DEEP_DETAIL }
        : tooDeepError(start(node));
    }
    const children = (node.items as unknown[]).flatMap((x) => (isPair(x) ? [x.key, x.value] : [x]));
    for (let i = children.length - 1; i >= 0; i--)
      stack.push({ node: children[i], depth: depth + 1, ...(via ? { via } : {}) });
  }
  return undefined;
}

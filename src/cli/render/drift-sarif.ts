// `converge drift --format sarif`: the findings as a SARIF 2.1.0 log (OASIS), for code scanning
// dashboards (GitHub's among them). One rule per drift class; each result names the object as a
// logical location and, where the stack declares the resource concerned, its place in the stack file
// (else the stack file itself). A finding's fingerprint is stable across runs, so a dashboard tracks
// one drift as one alert until it changes.
import { createHash } from "node:crypto";
import type { Log, ReportingDescriptor, Result } from "sarif";
import { type DriftClass, type DriftFinding, DRIFT_LETTER, findingKey } from "../../plan/drift.js";
import { TOOL_VERSION } from "../../base/version.js";
import { DRIFT_LABEL, findingSentence } from "./drift-text.js";

const CLASSES = Object.keys(DRIFT_LABEL) as DriftClass[];

const HELP: Readonly<Record<DriftClass, string>> = {
  removed: "A grant converge owns was removed out of band. `converge drift --remediate --out PLAN` restores it.",
  added: "A member was added to a role or policy converge manages authoritatively: the next apply revokes it.",
  unmanaged: "A grant on an object converge manages in part, that no resource owns. `--adopt --out FILE` adopts it.",
  "deleted-principal": "A principal holding a role was deleted: its grant stays, under a deleted: member.",
  condition: "A grant converge owns is there with another condition than the one approved.",
};

/** Where in the stack file a resource is declared (1-based), when it is. */
export type Where = (address: string | undefined) => { line: number; column: number } | undefined;

function rule(c: DriftClass): ReportingDescriptor {
  return {
    id: `drift/${c}`,
    name: `Drift${DRIFT_LETTER[c].toUpperCase()}`,
    shortDescription: { text: `(${DRIFT_LETTER[c]}) ${DRIFT_LABEL[c]}` },
    fullDescription: { text: HELP[c] },
    defaultConfiguration: { level: c === "unmanaged" || c === "deleted-principal" ? "warning" : "error" },
  };
}

function result(f: DriftFinding, stackUri: string, where: Where): Result {
  const at = where(f.address);
  return {
    ruleId: `drift/${f.class}`,
    ruleIndex: CLASSES.indexOf(f.class),
    level: f.class === "unmanaged" || f.class === "deleted-principal" ? "warning" : "error",
    message: { text: findingSentence(f) },
    locations: [
      {
        physicalLocation: {
          artifactLocation: { uri: stackUri },
          ...(at ? { region: { startLine: at.line, startColumn: at.column } } : {}),
        },
        logicalLocations: [{ fullyQualifiedName: f.object, kind: "resource" }],
      },
    ],
    partialFingerprints: { "convergeDrift/v1": createHash("sha256").update(findingKey(f)).digest("hex") },
    properties: { object: f.object, role: f.role, member: f.member, ...(f.address ? { address: f.address } : {}) },
  };
}

/** The SARIF log of `findings`; `stackUri`: the stack file, relative to where the log is read. */
export function driftSarif(findings: readonly DriftFinding[], stackUri: string, where: Where): Log {
  return {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "converge",
            version: TOOL_VERSION,
            informationUri: "https://converge.dev",
            rules: CLASSES.map(rule),
          },
        },
        results: findings.map((f) => result(f, stackUri, where)),
      },
    ],
  };
}

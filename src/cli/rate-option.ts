// --rate service=N/min (repeatable): the request rate converge keeps to per (service, project),
// over the defaults (src/cloud/rate-limit.ts: Google's published IAM quotas for Google's APIs,
// unlimited for an emulator). Each rate still backs off on 429 RESOURCE_EXHAUSTED.
import { Option } from "commander";
import { UserError } from "../diagnostics/diagnostic.js";
import { ALL_KINDS, OBJECT_KINDS } from "../gcp/object-kinds.js";
import { parseRate, type RateTable } from "../cloud/rate-limit.js";

const SERVICES = [...new Set(ALL_KINDS.map((k) => OBJECT_KINDS[k].service))];

export function rateOption(): Option {
  const help =
    `requests per minute per project to a service, e.g. gkebackup=600/min; {service}.write=N/min limits ` +
    `its setIamPolicy writes (repeatable; services: ${SERVICES.join(", ")}; default on Google: 6000/min, ` +
    `writes 600/min)`;
  return new Option("--rate <service=N/min>", help).argParser((v: string, prev: string[] | undefined) => [
    ...(prev ?? []),
    v,
  ]);
}

/** The rate table of --rate; a value it cannot read is the user's error. */
export function ratesOf(o: { rate?: string[] }): RateTable {
  const table: Record<string, number> = {};
  for (const text of o.rate ?? []) {
    const r = parseRate(text, SERVICES);
    if (typeof r === "string") throw new UserError({ severity: "error", summary: r });
    table[r.key] = r.perMinute;
  }
  return table;
}

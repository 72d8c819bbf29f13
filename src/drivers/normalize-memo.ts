// A driver's normalisation, remembered per properties object: the loader normalises each
// resource's literal properties to check them, and the plan asks again for the same object (at
// 10,000 resources the second pass cost as much as the first). Values are never mutated once
// loaded, so the same object with the same defaults normalises to the same inputs.
import { type NameDefaults, projectIdsIn } from "../cloud/names.js";
import type { IamDriver } from "./types.js";

type Normalize = IamDriver["normalize"];
type Normalized = ReturnType<Normalize>;

export function rememberedNormalize(normalize: Normalize): Normalize {
  const seen = new WeakMap<
    object,
    {
      project: string | undefined;
      location: string | undefined;
      projectIds: NameDefaults["projectIds"];
      result: Normalized;
    }
  >();
  return (raw, defaults: NameDefaults) => {
    const hit = seen.get(raw);
    const projectIds = projectIdsIn(defaults);
    if (hit && hit.project === defaults.project && hit.location === defaults.location && hit.projectIds === projectIds)
      return hit.result;
    const result = normalize(raw, defaults);
    seen.set(raw, { project: defaults.project, location: defaults.location, projectIds, result });
    return result;
  };
}

// Progress wording per action, Terraform's ("Creating...", "Creation complete").
const VERB: Record<string, [string, string]> = {
  create: ["Creating", "Creation complete"],
  update: ["Modifying", "Modifications complete"],
  replace: ["Replacing", "Replacement complete"],
  delete: ["Destroying", "Destruction complete"],
  read: ["Reading", "Read complete"],
  import: ["Importing", "Import complete"],
  "no-op": ["Recording", "Recorded"],
};

export function verbs(action: string): [string, string] {
  return VERB[action] ?? ["Working", "Done"];
}
